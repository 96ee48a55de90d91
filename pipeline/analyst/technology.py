"""Which technology the evidence shows, and whether a doc written for some technologies fits it
(issue 21.3: no borrowed certainty).

A curated doc names the technologies it was written for (`systems` in its front matter: java,
spring, node, postgres, ...). A doc's signature can match evidence from another technology (an
sshd "Connection reset by peer" is not a Java client's refused connection), and then its cause
and its fix are an analogy, not a diagnosis. `shown_by` reads the technologies the events
themselves name, from what a logger writes whatever the layout: the service and logger names
(a Java class `dfs.DataNode$PacketResponder`, a `*.exe`, `sshd`), exception class names, source
file extensions in traces (`.java:`, `.py"`, `.go:`, `.js:`), and vocabulary a runtime alone
prints (`Traceback (most recent call last)`, `goroutine 12 [running]`, `node:net:1555`).
`doc_fits` compares those with the doc's systems after mapping libraries to the runtime they
run on (hikari -> java, psycopg -> python, ioredis -> node).
"""
from __future__ import annotations

import functools
import re
from typing import Iterable

from pipeline.knowledge.index import Doc
from pipeline.knowledge.retrieval import error_fields
from pipeline.state import LogEvent

# a library or framework in a doc's `systems` stands for the runtime it runs on, and the doc fits
# evidence of either; names not listed stand for themselves (postgres, kafka, kubernetes, linux)
RUNTIME_OF = {
    **dict.fromkeys((
        "jvm", "spring", "spring-kafka", "spring-amqp", "spring-security", "hibernate", "hibernate-validator",
        "jpa", "jdbc", "hikari", "tomcat", "tomcat-jdbc", "netty", "okhttp", "feign", "resttemplate", "webclient",
        "resilience4j", "hystrix", "jackson", "c3p0", "commons-dbcp2", "liquibase", "flyway", "maven", "gradle",
        "jakarta-validation", "zookeeper", "hadoop", "hdfs", "spark", "scala", "kotlin"), "java"),
    **dict.fromkeys((
        "express", "axios", "undici", "typescript", "javascript", "npm", "yarn", "v8", "sequelize", "prisma",
        "typeorm", "knex", "pg", "ioredis", "amqplib", "mysql2", "body-parser", "envalid", "dotenv",
        "aws-sdk-js-v3", "mongoose"), "node"),
    **dict.fromkeys((
        "django", "flask", "fastapi", "requests", "urllib3", "httpx", "sqlalchemy", "psycopg", "psycopg_pool",
        "asyncpg", "celery", "gunicorn", "uwsgi", "pydantic", "boto3", "redis-py", "pika", "pandas", "alembic",
        "pip", "poetry", "authlib", "google-api-core"), "python"),
    **dict.fromkeys((
        "net/http", "pgx", "pgxpool", "go-redis", "viper", "envconfig", "encoding/json", "database/sql",
        "database-sql", "aws-sdk-go-v2"), "go"),
    **dict.fromkeys(("csharp", "sqlclient"), "dotnet"),
    **dict.fromkeys(("rails", "activerecord", "sequel", "puma", "sidekiq"), "ruby"),
    **dict.fromkeys(("ecto", "dbconnection", "postgrex", "phoenix", "jason", "poison"), "elixir"),
    **dict.fromkeys(("laravel", "composer", "horizon"), "php"),
    **dict.fromkeys(("ingress-nginx",), "nginx"),
    **dict.fromkeys(("openssh", "sshd"), "linux"),
}
# protocols and formats every runtime speaks: they name no technology, a doc's fit is decided by
# its other systems (a doc of only these fits any evidence)
GENERIC = frozenset({"http", "https", "grpc", "oauth2", "json", "protobuf", "avro", "tcp", "tls", "dns"})

_CLASS = r"[A-Z][A-Za-z0-9]*"
# (technology, pattern) over the text of an event: its service, logger, exception, message, stack
_CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((tech, re.compile(pattern)) for tech, pattern in (
    # a JVM class: a dotted package before a class name (`org.apache.hadoop.ipc.Client`,
    # `dfs.FSNamesystem`, `c.r.tender.TenderApplication`), an inner class (`QuorumCnxManager$SendWorker`),
    # a trace frame in a .java/.scala/.kt file
    # (a dotted class ending in Error is Python's `sqlalchemy.exc.TimeoutError` unless its package is java's)
    ("java", rf"(?<![\w./-])(?:[a-z][a-z0-9_]*\.)+(?!\w*Error\b){_CLASS}(?:\${_CLASS})?(?![\w/-])"),
    ("java", r"\b(?:java|javax|kotlin)\.[\w.]+Error\b"),
    ("java", rf"\b{_CLASS}\${_CLASS}\b"),
    ("java", r"\.(?:java|scala|kt):\d+\)|\bat [\w$.]+\((?:Native Method|Unknown Source)\)|\bCaused by: [\w.]+\.\w+"),
    ("java", r"(?i)\b(?:zookeeper|hadoop|hdfs|mapreduce|hikaripool)|\b(?:spark|jvm|java)\b"),
    ("python", r"Traceback \(most recent call last\)|File \"[^\"]+\.py\"|\.py:\d+\b|\[Errno \d+\]"),
    ("python", r"\b(?:sqlalchemy|psycopg2?|urllib3|requests\.exceptions|django|celery|gunicorn|asyncpg|pymysql|httpx)\b"),
    ("python", r"\b[A-Z]\w*Error\(|\bHTTPS?ConnectionPool\("),
    ("go", r"\bgoroutine \d+ \[|\.go:\d+\b|\bpanic: |\bdial tcp\b|\bcontext deadline exceeded\b|\(Client\.Timeout\b"),
    ("node", r"\bnode:[a-z_]+:\d+|[\w/-]\.(?:m?js|cjs)\b|\.ts:\d+:\d+|\bnode_modules\b|\bTCPConnectWrap\b|\bgetaddrinfo E[A-Z]+"),
    ("node", r"\bnode::|\bv8::|\[node\]|\bnpm ERR!|\bJavaScript heap\b"),
    ("node", r"\bCannot read propert(?:y|ies) of (?:undefined|null)\b|\bUnhandledPromiseRejection|\b(?:ioredis|axios|express)\b"),
    # what only a JavaScript runtime writes: Node's words for a rejection nobody handled ("Unhandled
    # promise rejection", its warning's text and the handler's usual log line) and JavaScript's default
    # string of an object, `[object Object]` (a rejection logged with its reason concatenated)
    ("node", r"(?i)\bunhandled promise rejection\b|\[object (?:Object|Promise|Error)\]"),
    # the error classes only JavaScript libraries raise: axios' `AxiosError` (a line logged with its class
    # and no trace or message names no other cue), the Node MongoDB driver's, Sequelize's, Prisma's
    ("node", r"\b(?:AxiosError|Mongo(?:Server|Network)Error|Sequelize[A-Z]\w*Error|PrismaClient[A-Z]\w*Error)\b"),
    ("dotnet", r"\bSystem\.[A-Z]\w+(?:\.[A-Z]\w+)*Exception\b|\.cs:line \d+"),
    ("ruby", r"\.rb:\d+:in\b|\b(?:ActiveRecord|Sequel)::"),
    # Elixir's raised form `** (DBConnection.ConnectionError) ...`, its pids `#PID<0.2231.0>`, .ex/.exs frames
    ("elixir", r"\*\* \([A-Z]\w*(?:\.[A-Z]\w*)*\) |#PID<\d+\.\d+\.\d+>|\.exs?:\d+\b|\b(?:Postgrex|Ecto|DBConnection)\."),
    ("php", r"\bPHP (?:Fatal|Warning|Notice)\b|\.php(?: on line|:\d+)"),
    ("postgres", r"(?i)\b(?:postgres(?:ql)?|psql|pgbouncer|sqlstate|pg_\w+)\b|\bDETAIL:\s|violates (?:unique|foreign key|not-null|check) constraint"
                 r"|\bnode_modules/pg/|\b\d\dP\d\d\b"),  # node-postgres; a SQLSTATE class only PostgreSQL has
    ("mysql", r"(?i)\b(?:mysql|mariadb|innodb)\b|Deadlock found when trying to get lock|\bER_[A-Z_]+\b"),
    ("kafka", r"(?i)\bkafka\b|\[(?:Consumer|Producer) clientId="),
    ("redis", r"(?i)\bredis\b|\bMISCONF\b"),
    ("rabbitmq", r"(?i)\b(?:rabbitmq|amqp)\b|\brabbit@[\w.-]+"),  # a node's default name is rabbit@host
    ("artemis", r"\bAMQ\d{6}\b|\b[Aa]rtemis\b|\bARTEMIS\b"),  # ActiveMQ Artemis' logger codes: AMQ222212
    ("elasticsearch", r"(?i)\b(?:elasticsearch|opensearch)\b|_engine_exception\b|cluster_block_exception"),
    ("mongodb", r"(?i)\bmongo(?:db)?\b"),
    ("kubernetes", r"(?i)\b(?:kubernetes|kubelet|oomkilled|crashloopbackoff|configmap)\b|\.svc\.cluster\.local\b"),
    ("nginx", r"(?i)\bnginx\b|\[(?:error|warn|crit|alert|emerg)\] \d+#\d+: "),
    ("apache-httpd", r"(?i)\b(?:httpd|mod_\w+|jk2_\w+|scoreboard)\b"),
    ("linux", r"\b(?:sshd|pam_unix|systemd|syslogd|rsyslogd|xinetd|crond?|kernel: )\b|\[preauth\]"),
    ("linux", r"\bE(?:NOSPC|MFILE|NFILE|ADDRINUSE|ADDRNOTAVAIL|NOMEM)\b|No space left on device|Too many open files"),
    ("windows", r"(?i)\b\w+\.exe\b"),
    ("aws", r"(?i)\b(?:aws|dynamodb|sqs|s3)\b|\bamazonaws\.com\b"),
))
# the service names users give often end in their runtime (`orders-node`, `ereceipt-java`)
_SERVICE_WORDS = {"java": "java", "jvm": "java", "node": "node", "nodejs": "node", "py": "python",
                  "python": "python", "go": "go", "golang": "go", "dotnet": "dotnet", "net": "dotnet"}
# the daemons of a Unix host, as syslog names them (`sshd`, `sshd(pam_unix)`, `xinetd`): a service
# name only, as words in a message they would mean something else
_DAEMONS = frozenset({"sshd", "ftpd", "vsftpd", "xinetd", "inetd", "named", "klogind", "logrotate", "udev", "udevd",
                      "kernel", "su", "sudo", "login", "cron", "crond", "cups", "cupsd", "gpm", "syslogd", "rsyslogd",
                      "systemd", "dhclient", "dhcpd", "ntpd", "chronyd", "auditd", "postfix", "smartd", "anacron",
                      "rpc.statd", "portmap", "hcid", "sdpd", "bluetooth", "irqbalance", "pam_unix"})
_TEXT_FIELDS = ("logger", "logger_name", "component", "module", "caller", "class", "thread", "sourcetype", "file",
                "code", "error", "err", "error.message", "error.type")
_CHARS = 2_000  # per event: the head carries the names; bounds the regex work on hostile lines


def _event_text(event: LogEvent) -> str:
    parts = [event.service or "", event.exception or "", (event.message or "")[:_CHARS], (event.stack or "")[:_CHARS]]
    for key in _TEXT_FIELDS:
        value = (event.fields or {}).get(key)
        if isinstance(value, str):
            parts.append(value[:200])
    # ... and the error fields the signatures read (a traceback under `exc_info` shows its runtime)
    parts += [text[:_CHARS] for text in error_fields(event.fields)] if event.fields else []
    return "\n".join(p for p in parts if p)


def shown_by(events: Iterable[LogEvent]) -> frozenset[str]:
    """The technologies (runtimes and products: java, python, postgres, linux, ...) the events name.

    Read once per evidence list: an analysis asks it 2-3 times of the same events (its category's
    support, by_analogy, the recommendation's and the fix's steps), and it was the largest part of
    the analysis' CPU; the answer is kept by the events' identities (the events held with it, so
    no id is reused while kept: events are not changed once normalised)."""
    events = events if isinstance(events, list) else list(events)
    key = tuple(map(id, events))
    kept = _SHOWN.get(key)
    if kept is not None:
        return kept[1]
    found: set[str] = set()
    seen: set[str] = set()
    for event in events:
        text = _event_text(event)
        if text in seen:
            continue
        seen.add(text)
        for word in re.split(r"[-_.\s]+", (event.service or "").lower()):
            if word in _SERVICE_WORDS:
                found.add(_SERVICE_WORDS[word])
        daemon = re.split(r"[\s(\[:]", (event.service or "").strip().lower(), maxsplit=1)[0]
        if daemon in _DAEMONS:
            found.add("linux")
        found |= _named_in(_LONG_NUMBER.sub(_zeros, text))
    shown = frozenset(found)
    if len(_SHOWN) >= _SHOWN_KEPT:
        _SHOWN.clear()
    _SHOWN[key] = (tuple(events), shown)
    return shown


# shown_by's answers for the last few evidence lists, keyed by their events' identities (held, so
# no id is reused while an answer is kept)
_SHOWN: dict[tuple[int, ...], tuple[tuple[LogEvent, ...], frozenset[str]]] = {}
_SHOWN_KEPT = 32


# a burst's texts differ in their ids and counts: with every run of 3 or more digits written as
# zeros (same length) they share one cache entry. No cue tells one digit from another in such a
# run (a cue's own digits, `psycopg2`, `v8::`, `s3`, stand alone beside letters, and `\d` matches 0),
# so each cue matches the masked text exactly where it matches the text
_LONG_NUMBER = re.compile(r"\d{3,}")


def _zeros(match: re.Match[str]) -> str:
    return "0" * len(match.group())


@functools.lru_cache(maxsize=1024)
def _named_in(text: str) -> frozenset[str]:
    # the cues' regexes are most of an analysis's time (about 30 searches of each distinct event
    # text), and an RCA asks twice of the same events (its category's support, then by_analogy)
    found: set[str] = set()
    for tech, pattern in _CUES:
        if tech not in found and pattern.search(text):
            found.add(tech)
    return frozenset(found)


def runtimes(systems: Iterable[str]) -> frozenset[str]:
    """A doc's systems as the technologies evidence would show (libraries mapped to their runtime)."""
    out = set()
    for name in systems:
        key = str(name).strip().lower()
        if key and key not in GENERIC:
            out.add(key)
            out.add(RUNTIME_OF.get(key, key))
    return frozenset(out)


def doc_fits(systems: Iterable[str], shown: frozenset[str]) -> bool:
    """Whether evidence showing `shown` is of a technology the doc was written for. A doc that
    names no technology (no systems, or protocols only) fits any evidence; evidence that shows no
    technology at all fits no doc that names one (nothing says the doc's technology is there)."""
    wanted = runtimes(systems)
    return not wanted or bool(wanted & shown)


def describe(shown: frozenset[str]) -> str:
    """The technologies as the RCA names them ("Java, ZooKeeper" style, sorted)."""
    return ", ".join(sorted(shown)) if shown else "no technology this analyzer recognises"


# below the default code-fix threshold (CODE_FIX_MIN_CONFIDENCE 0.5); whatever that setting, an
# analysis by analogy is not `supported` and so never proposes a fix
ANALOGY_CONFIDENCE = 0.45


def by_analogy(events: list[LogEvent], doc: Doc | None) -> str | None:
    """The sentence saying a cause is named by analogy, when the doc was written for a technology
    the evidence does not show (issue 21.3); None when it fits."""
    if doc is None or not doc.systems:
        return None
    shown = shown_by(events)
    if doc_fits(doc.systems, shown):
        return None
    return (f"By analogy: the evidence shows {describe(shown)}, and doc {doc.doc_id} was written for "
            f"{', '.join(doc.systems)}; its cause is a likeness, not a diagnosis of this technology.")


# the technologies a remediation step can name: the libraries and products above, and the runtimes,
# less the ones that are ordinary words in a sentence ("requests", "express", "go", "spark")
_ORDINARY = frozenset({"requests", "express", "spark", "pip", "poetry", "pg", "go", "net", "scala", "knex", "viper",
                       "feign", "jackson", "v8", "webclient", "pydantic", "pandas"})
_STEP_WORDS: dict[str, str] = {name: name for name in (*RUNTIME_OF, *set(RUNTIME_OF.values()), "postgres",
                                                       "postgresql", "mysql", "mariadb", "kafka", "redis", "rabbitmq",
                                                       "elasticsearch", "mongodb", "hikaricp", "lettuce", "jedis",
                                                       "pgbouncer", "celery", "tenacity", "kombu", "node.js", "nodejs")
                               if name not in _ORDINARY and "/" not in name}
_RUNTIME_WORDS = {**{r: r for r in set(RUNTIME_OF.values())}, "nodejs": "node", "node.js": "node"}
_STEP_NAMES = re.compile(r"(?<![\w.-])(" + "|".join(sorted(map(re.escape, _STEP_WORDS), key=len, reverse=True))
                         + r")(?![\w-])", re.I)


@functools.lru_cache(maxsize=256)  # the same evidence is read by the recommendation and the fix plan
def named_technologies(text: str) -> frozenset[str]:
    """The libraries, products and runtimes a piece of prose (a doc's step or hint) names, lowered."""
    return frozenset(m.group(1).lower() for m in _STEP_NAMES.finditer(text or ""))


# evidence_stack's answers for the last few evidence lists, keyed by the identity of their events
# and holding them (so no id is reused while kept): the recommendation, the fix's eligibility and
# its plan of one analysis ask about the same events, and events are not changed once normalised
_STACKS: dict[tuple[int, ...], tuple[list[LogEvent], frozenset[str]]] = {}
_STACKS_KEPT = 32


def evidence_stack(events: list[LogEvent]) -> frozenset[str]:
    """What `foreign_step` compares a step with, read once per analysis: the technologies the events
    show (shown_by) and, prefixed `named:`, the libraries and products their words name."""
    key = tuple(map(id, events))
    kept = _STACKS.get(key)
    if kept is not None:
        return kept[1]
    # each distinct event text read once, its long numbers as zeros (a burst's texts share it)
    mentioned = frozenset().union(*(named_technologies(_LONG_NUMBER.sub(_zeros, text)) for text in _event_words(events)))
    stack = shown_by(events) | {f"named:{name}" for name in mentioned}
    if len(_STACKS) >= _STACKS_KEPT:
        _STACKS.clear()
    _STACKS[key] = (list(events), stack)
    return stack


# a name in code a step tells the reader to use: a package's or type's member (`http.Client`,
# `context.WithTimeout`, `Transport.ResponseHeaderTimeout`) or a CamelCase type or function
# (`DialContext`, `RestTemplate`); it is of the runtime the step's doc was written for
_CODE_NAME = re.compile(r"(?<![\w.])(?:[a-z][a-z0-9_]*\.[A-Z]\w*|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+)(?![\w-])")
_RUNTIMES = frozenset(RUNTIME_OF.values())


@functools.lru_cache(maxsize=4096)
def foreign_step(step: str, stack: frozenset[str], systems: tuple[str, ...] = ()) -> bool:
    """Whether a doc's step is another stack's (`stack` from `evidence_stack`): it names technologies
    (SQLAlchemy, redis-py, Celery) and none of them is one the evidence shows or names, nor a library
    of a runtime it shows (issue 36.5: a borrowed doc never carries another stack's steps); or it
    names code (`http.Client`, `DialContext`) of a doc whose `systems` are of a runtime the evidence
    does not show while it shows another (Go's client advice for a Java service). A step naming no
    technology and no code is nobody's in particular and fits; so is one when the evidence shows
    no runtime (nothing says which stack it is)."""
    named = named_technologies(step)
    doc_runtimes = runtimes(systems) & _RUNTIMES
    if doc_runtimes and not doc_runtimes & stack and _RUNTIMES & stack and _CODE_NAME.search(step):
        return True
    # a runtime counts when the evidence shows it (its careful cues: "node -1" in a Kafka line is no
    # Node.js); a library when the evidence shows its runtime (a Spring key for a Java service) or
    # names it; a product (postgres, kafka) when the evidence shows or names it
    return bool(named) and not any(
        _RUNTIME_WORDS[name] in stack if name in _RUNTIME_WORDS else
        (name in stack or f"named:{name}" in stack or RUNTIME_OF.get(name, name) in stack) for name in named)


def own_steps(steps: Iterable[str], events: list[LogEvent], systems: Iterable[str] = ()) -> list[str]:
    """The steps (of a doc written for `systems`) that are not another stack's (`foreign_step`), in their order."""
    stack = evidence_stack(events)
    written_for = tuple(systems)
    return [step for step in steps if not foreign_step(step, stack, written_for)]


def _event_words(events: list[LogEvent]) -> list[str]:
    """The distinct lowered texts of the events (service, exception, message, trace, logger fields)."""
    return list(dict.fromkeys(_event_text(event).lower() for event in events))
