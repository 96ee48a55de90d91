"""The required ideas of each category's cause, as words (issue 36.1; CONTRACT §3 "Causes in other words"):
every group of an idea needs one of its words in one event, said together, for the idea to name its category.
The order is the reading's: the most specific first, the first idea whose words a text carries anywhere decides
it (pipeline/analyst/ideas.py reads them)."""
from __future__ import annotations

from dataclasses import dataclass

NEAR = 10  # words: a cause's ideas are said in one clause


@dataclass(frozen=True)
class Idea:
    """The required ideas of one category's cause: every group needs one of its words in one event."""

    category: str
    groups: tuple[frozenset[str], ...]
    label: str
    # what one event of the incident must say near together for this idea to count (the pool a bare
    # `Pool#acquire` timed out on named a connection pool where it was set up), and words that, in the
    # idea's own event, say it is another thing's (a thread pool's acquire is an executor's)
    context: tuple[frozenset[str], ...] = ()
    unless: frozenset[str] = frozenset()
    # the incident must say a version changed (a deploy, an upgrade, a build against: versions.changed), as code
    # built against one version of a library and run against another is only a mismatch beside that change
    changed: bool = False

    def found_in(self, words: frozenset[str]) -> bool:
        # isdisjoint answers without building the intersection (the reading tests every idea on every text)
        return all(not group.isdisjoint(words) for group in self.groups)

    def found_near(self, tokens: tuple[str, ...]) -> bool:
        """Every group's word within NEAR words of each other: one clause's idea, not words strewn
        over a trace (`bean with name` ... `could not resolve placeholder` is no unresolved host)."""
        if not self.found_in(frozenset(tokens)):
            return False
        hits = [(n, g) for n, t in enumerate(tokens) for g, group in enumerate(self.groups) if t in group]
        last: dict[int, int] = {}
        for n, g in hits:
            last[g] = n
            if len(last) == len(self.groups) and n - min(last.values()) < NEAR:
                return True
        return False


def _idea(category: str, label: str, *groups: str, context: tuple[str, ...] = (), unless: str = "",
          changed: bool = False) -> Idea:
    return Idea(category, tuple(frozenset(g.split()) for g in groups), label,
                tuple(frozenset(g.split()) for g in context), frozenset(unless.split()), changed)


# a database's own words: where a pool or a lock is a database's
DATABASE_WORDS = "connection connections conn conns jdbc odbc r2dbc datasource database db sql transaction"


# a data store's own words, without a connection's (a line saying `connection` names no store): the store a pool's
# words belong to when the line does not say `connection` (Jedis' `Could not get a resource since the pool is
# exhausted`, Agroal's `java.sql.SQLException: Sorry, acquisition timeout!`)
STORE_WORDS = ("jdbc odbc r2dbc datasource database databases db sql transaction redis jedis lettuce mongo mongodb "
               "memcached cassandra postgres postgresql mysql")


# the most specific first: a pool's acquire timeout is pool exhaustion before it is a timeout
IDEAS: tuple[Idea, ...] = (
    _idea("db_pool_exhausted", "a connection pool with no connection to give",
          "pool pooled jdbc datasource", "connection connections conn conns",
          # waiting for a connection is acquiring one (`pool timed out while waiting for an open connection`);
          # a read timing out on a pooled connection is not (urllib3's `HTTPConnectionPool(...): Read timed out`)
          # ... or every one of them taken (`All pooled connections are in use`, `none available[busy:10]`)
          "exhausted exhaustion exhaust acquire acquiring acquisition obtain checkout depleted wait waiting waited "
          "use busy"),
    # a pool's acquire timing out, the line naming no connection (`Pool#acquire(Duration) has been pending for
    # more than the configured timeout`): a connection pool's when the incident names its pool a database's
    _idea("db_pool_exhausted", "a connection pool with no connection to give",
          "pool", "acquire acquiring acquisition checkout exhausted depleted", "timeout timed pending waiting",
          context=("pool", DATABASE_WORDS), unless="thread threads executor worker workers"),
    # a data store's pool said exhausted or timed out, the line naming no acquire (`redis: connection pool timeout`,
    # `Could not get a resource since the pool is exhausted`): the store's pool when a line names the store by it;
    # not an HTTP client's pool reading a response late (urllib3's `HTTPConnectionPool(...): Read timed out`)
    _idea("db_pool_exhausted", "a connection pool with no connection to give",
          "pool", "exhausted depleted exhaustion timeout",
          context=("pool", STORE_WORDS), unless="thread threads executor worker workers http https read write socket"),
    # an acquisition of a connection from a store's driver timing out, no pool said (`java.sql.SQLException: Sorry,
    # acquisition timeout!`): what is acquired from a SQL driver is a connection; not a lock's or a permit's acquire
    _idea("db_pool_exhausted", "a connection pool with no connection to give",
          "acquisition acquire acquiring", "timeout timed", "jdbc odbc r2dbc datasource sql",
          unless="lock locks mutex semaphore permit permits token tokens thread threads"),
    # ... or a wait to be handed a connection timing out, the driver naming its store (the MongoDB driver's `Timed out
    # after 120000 ms while waiting for a connection to server db-1:27017`): waiting *for a connection* is the pool's
    # queue; waiting *to connect* is a dial (another idea)
    _idea("db_pool_exhausted", "a connection pool with no connection to give",
          "waiting wait waited", "connection", "timed timeout",
          context=(STORE_WORDS,), unless="establish established connect connecting handshake response reply"),
    _idea("tls_certificate", "a certificate expired, revoked or not trusted",
          "certificate certificates cert certs x509", "expired untrusted revoked authority verify verification "
          # ... or signed by itself, or issued for another name (`self-signed certificate in chain`, `certificate
          # hostname mismatch`: pipeline/analyst/ideas.py reads `self-signed` as one word)
          "validate validation selfsigned mismatch mismatched"),
    # ... or the peer's certificate or its chain said invalid (`The remote certificate is invalid because of errors in
    # the certificate chain`); not a setting's certificate left unspecified beside an `InvalidOperationException`
    _idea("tls_certificate", "a certificate expired, revoked or not trusted",
          "certificate certificates cert certs x509", "invalid", "chain remote peer"),
    _idea("tls_certificate", "a certificate expired, revoked or not trusted",
          "ssl tls", "expired untrusted revoked"),
    # a chain whose issuer the peer does not trust (TLS's `unknown_ca` alert, `unable to get local issuer`)
    _idea("tls_certificate", "a certificate expired, revoked or not trusted",
          "ssl tls handshake certificate cert x509", "ca issuer", "unknown untrusted invalid"),
    # a handshake whose protocol version the two sides do not share (JSSE's `The server selected protocol version TLS10
    # is not accepted by client preferences [TLS13, TLS12]`, Go's `tls: server selected unsupported protocol version
    # 301`, OpenSSL's `tlsv1 alert protocol version`): TLS failing, said by a TLS word; not another protocol's version
    # (an MCP server's `server selected unsupported protocol version "2099-01-01"`)
    _idea("tls_certificate", "a TLS handshake failing on its protocol version",
          "tls ssl tlsv1 tls10 tls11 tls12 tls13 sslv3 handshake", "protocol", "version versions",
          unless="mcp http2 grpc"),
    # transactions waiting on each other's locks (a goroutine deadlock names no transaction or lock)
    _idea("db_deadlock", "transactions deadlocked on each other's locks",
          "deadlock deadlocked deadlocks", "found detected transaction transactions lock locks victim update updating"),
    # ... said as transactions blocking each other (`two transactions blocked each other on orders`)
    _idea("db_deadlock", "transactions deadlocked on each other's locks", "transaction transactions txn txns",
          "blocked blocking block waiting waited", "each", "other"),
    # a lock a transaction waited for past its time (`A lock could not be obtained within the time requested`,
    # `Lock wait timeout exceeded`): a database's, when the incident names one
    _idea("db_deadlock", "a transaction waiting on another's lock past its time",
          "lock locks", "obtained obtain acquire acquired acquisition acquiring granted wait waiting",
          "time timeout timed", context=(DATABASE_WORDS,)),
    # ... or said held by another holder, or still waited for (`Could not obtain lock ... Lock held since 06:41 by
    # kc-1`, `process 2211 still waiting for AccessExclusiveLock`): a database's, when the incident names one
    _idea("db_deadlock", "a transaction waiting on another's lock past its time",
          "lock locks locked", "obtain obtained acquire acquired wait waiting", "held holding still",
          context=(DATABASE_WORDS,), unless="thread threads mutex file"),
    _idea("concurrency_conflict", "a concurrent update lost its race",
          # (or a stale struct's delete: `attempted to delete a stale struct`)
          "optimistic stale concurrent concurrently", "lock locking update updated modification modified version conflict "
          "delete deleted"),
    # a record said changed by another writer since it was read (`record changed by another user`, `Row was updated
    # or deleted by another transaction`): the write that followed lost the race
    _idea("concurrency_conflict", "a concurrent update lost its race",
          "changed modified updated deleted edited", "by", "another", unless="config configuration setting settings"),
    # a message's lease lost before its consumer settled it (`MessageLockLostError: the lock on the message has expired`,
    # `The receipt handle has expired`): another consumer is handed it, so its work runs twice; not a certificate's or a
    # token's expiry (their ideas name those)
    _idea("concurrency_conflict", "a concurrent update lost its race",
          "lock lease receipt visibility", "expired lost", "message messages handle",
          unless="certificate cert token password credentials"),
    # a write guarded by what the writer last read (HTTP 412 on an `If-Match` ETag, a conditional put) refused
    # because another writer changed it first
    # (not gRPC's FAILED_PRECONDITION, a status for any state the call needs and finds otherwise: `no poller seen for
    # task queue`)
    _idea("concurrency_conflict", "a concurrent update lost its race",
          "precondition conditional etag", "failed met unmet mismatch", unless="grpc"),
    # a commit or write refused because another transaction wrote the same data first (`txn aborted: conflicting
    # writes on key 42`): not a merge's conflict of files
    _idea("concurrency_conflict", "a concurrent update lost its race",
          "conflict conflicts conflicting", "write writes commit committing transaction transactions txn",
          unless="merge merging rebase lock locks"),  # (a lock's conflict is a wait's, not a lost race's)
    # a transaction the database asks to be retried because a concurrent one wrote first (`restart transaction:
    # TransactionRetryWithProtoRefreshError: WriteTooOldError`); a deadlock's "try restarting transaction" is read above
    _idea("concurrency_conflict", "a concurrent update lost its race",
          "transaction transactions txn", "retry restart", "serializable serialization old pushed uncertainty"),
    # a record, document or key said to exist already (`Document with the given id already exists`, a node with a
    # unique property): a duplicate, read before the schema's "exist" (a table or column created twice is a
    # migration's)
    _idea("data_integrity", "a record breaking its validation or a constraint", "already", "exists exist existing",
          "id ids key keys document documents doc row rows record records entry entries entity node nodes item items",
          unless="table tables column columns relation relations migration migrations index"),
    _idea("db_schema_mismatch", "code and schema disagreeing",
          "column columns table relation migration migrations schema",
          # ... or SQLite's `no such table` / `no such column`
          "missing exist exists unknown undefined pending mismatch such",
          # (not a payload's schema its reader decodes against: an Avro or Protobuf record's schema id unknown)
          unless="decode decoding decoder deserialize deserializing deserialization deserializer unmarshal "
                 "unmarshaling avro protobuf registry"),
    # ... or a query's column or table that the engine cannot find or resolve (`unable to resolve column "sku"`,
    # `tables not found: orders_v3`): not a row or record looked up and absent
    _idea("db_schema_mismatch", "code and schema disagreeing",
          "column columns table tables relation relations collection collections", "not cannot unable",
          "found find resolved resolve", unless="row rows record records entity entities document documents host hostname"),
    _idea("dns_resolution", "a host name that does not resolve",
          "resolve resolving resolution resolved unresolved nxdomain unknownhost lookup",
          "host hostname dns domain name", "not unable failed failure cannot unknown nxdomain error no"),
    # ... or the domain said not to exist (Mint's `non-existing domain`, NXDOMAIN's own words)
    _idea("dns_resolution", "a host name that does not resolve", "non nonexistent", "existing existent", "domain"),
    # ... or the host said unknown, in one word or two (`UnknownHostError: kafka-2.svc`, `Unknown host db-3`: ideas.py
    # reads them as `unknownhost`); not SSH's unknown host key
    _idea("dns_resolution", "a host name that does not resolve", "unknownhost", unless="key keys fingerprint ssh"),
    # a flag's, option's or setting's value said invalid (`invalid value "30sec" for flag -read-timeout`): its configuration
    # is wrong, whatever the setting is named (so before the timeout's words)
    _idea("config_missing", "a required setting not found", "invalid bad illegal", "value values",
          "flag flags option options argument arguments parameter parameters setting settings env environment "
          "config configuration"),
    # a request or task that outlived the time limit its server or worker pool set, the worker killed for it
    # (gunicorn's `WORKER TIMEOUT (pid:24)`, unicorn's `worker=0 PID:123 timeout (61s > 60s), killing`, uWSGI's
    # `HARAKIRI ON WORKER 3`): the work waited past its time, on a dependency as a rule; not a worker's start or
    # heartbeat waited for
    _idea("upstream_timeout", "a request outlived its worker's time limit",
          "worker workers harakiri", "timeout harakiri",
          unless="heartbeat heartbeats startup boot booting ready spawn spawning register registration"),
    # ... or a task's or script's time limit said exceeded (Celery's `Hard time limit (120s) exceeded for
    # tasks.render[id]`, PHP's `Maximum execution time of 30 seconds exceeded`): not a rate's limit, a CPU's
    _idea("upstream_timeout", "a request outlived its worker's time limit",
          "time", "limit execution", "exceeded exceeds",
          unless="rate ratelimit quota cpu throttled throttling"),
    _idea("upstream_timeout", "a call to a dependency timing out",
          "timeout timed timedout deadline",
          # ... or a remote procedure's (gRPC's `DeadlineExceeded` calling a method)
          "service upstream gateway request requests call calls calling rpc response http 503 504 read command redis api "
          # ... or a server's handling of one (kube-apiserver's `timeout or abort while handling: method=LIST URI=...`)
          "handling "
          # ... or a remote invocation's (`GetOperation invocation failed to complete due to operation-heartbeat-timeout`)
          "invocation invoke"),
    # ... or said not to have answered in its time (`the quote service did not respond within 3s`, `no reply within
    # the deadline`)
    _idea("upstream_timeout", "a call to a dependency timing out",
          # ... or not to have completed within its timeout (`did not complete within the timeout`)
          "not", "answer answered respond responded reply replied complete completed", "within time in",
          unless="enough"),  # ... not a lack said (`not enough free threads in the ThreadPool to complete`)
    _idea("upstream_timeout", "a call to a dependency timing out", "no", "response reply answer", "within"),
    # ... or said to have taken too long to answer (`the gateway took too long to respond`), or past its deadline
    # (`GET .../rates exceeded 10s deadline`: read after the refusal's ideas, below)
    _idea("upstream_timeout", "a call to a dependency timing out", "too", "long",
          "respond responded response reply replied answer answered",
          unless="header headers line lines name field value size bytes body payload url uri"),  # a thing too long
    # a connection's opening timing out (the JDK's `java.net.ConnectException: Connection timed out`, libpq's `...
    # failed: Connection timed out`: pipeline/analyst/ideas.py reads the words one after the other as `connecttimeout`):
    # the dependency did not answer the dial in time; not an idle, pooled or leased connection closed for its age
    _idea("upstream_timeout", "a call to a dependency timing out", "connecttimeout",
          unless="idle keepalive pool pooled lease leased"),
    # a remedy that asks for an environment variable to be set (`no key given: pass one or set
    # the X env var`):
    # the setting is missing, even when what needs it is a login (so before the credentials' ideas)
    # ... unless a dependency is said to have rejected what it was given (a 401, a token refused or expired)
    _idea("config_missing", "a required setting not found", "set setting", "environment env", "variable variables var",
          unless="401 403 rejected denied refused unauthorized forbidden expired revoked"),
    # a login refused is a credential rejected, not a socket refused (RabbitMQ's `ACCESS_REFUSED - Login
    # was refused`): the credentials' idea is read before the refusal's
    _idea("upstream_auth_failure", "credentials rejected by a dependency",
          # a login or password refused or expired (`ORA-01017: ... logon denied`, `password has expired`)
          "authentication authenticate authenticated unauthenticated unauthorized authorization credential "
          "credentials sasl "
          "login logon password publickey",
          "failed failure fails invalid rejected refused denied incorrect wrong bad expired violation",
          # (not an end user who entered a wrong password: their login, not a dependency's credentials)
          unless="entered typed"),
    # a bearer token or JWT expired, revoked or refused (not a parser's `Unexpected token`)
    _idea("upstream_auth_failure", "credentials rejected by a dependency",
          "token tokens jwt bearer", "expired revoked invalid rejected",
          # (nor .NET's `InvalidOperationException` thrown by a token's handler: an operation said invalid)
          unless="unexpected syntax syntaxerror parse parsing json lexer operation"),
    # a dependency answering forbidden to the token or access list presented (`Unexpected response code: 403
    # (ACL not found)`)
    _idea("upstream_auth_failure", "credentials rejected by a dependency",
          "acl token tokens apikey", "401 403 forbidden unauthorized"),
    # ... or a dependency's HTTP 403 saying the permission is denied (`Code: 403. Errors: * permission denied`): not a
    # file's EACCES, which no status code names
    _idea("upstream_auth_failure", "credentials rejected by a dependency", "403", "permission permissions access",
          "denied"),
    # ... or the user it was given, that a broker or server could not validate (`Unable to validate user ... Username:
    # orders`): not a user's input validated
    _idea("upstream_auth_failure", "credentials rejected by a dependency", "user username users",
          "validate validated verify verified", "unable cannot failed not",
          unless="input inputs field fields form payload email data"),
    # ... or access said denied to a resource, a repository or a user requested (`requested access to the resource is
    # denied`, `Access denied for user`): not a file's or a path's
    _idea("upstream_auth_failure", "credentials rejected by a dependency", "access", "denied",
          "requested resource resources user repository registry", unless="path file files directory folder"),
    # ... or access to a dependency said not allowed (AWS's `AccessDeniedException: Access to KMS is not allowed`): not a
    # file's, nor an HTTP method's or a browser origin's
    _idea("upstream_auth_failure", "credentials rejected by a dependency", "access", "not", "allowed permitted",
          unless="path file files directory folder method origin cors"),
    # a dependency limiting the rate of calls (`urn:ietf:params:acme:error:rateLimited`, `Rate exceeded`)
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls",
          "rate ratelimit ratelimited throttled throttling", "limit limited limiting exceeded"),
    # ... a request throttled and refused (`Throttling.User ... Request was denied due to user flow control`), or
    # a request rate said too high (`Request rate is large`)
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls",
          "throttled throttling throttle", "denied rejected refused exceeded request requests"),
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls",
          "request requests", "rate", "large exceeded"),
    # a quota of things (pods, CPUs, volumes) used up (`exceeded quota: team-quota, used: pods=40, limited: pods=40`):
    # not a quota of calls (rate-limited, read below), nor a disk's (its space)
    _idea("resource_exhaustion", "a quota of resources used up", "quota quotas", "exceeded exhausted",
          "pods pod cpu cpus memory volumes used limited forbidden",
          unless="call calls rpm qps rate ratelimit api metric minute second per day disk storage space bytes inodes"),
    # ... or a quota of calls used up (`Quota exceeded for quota metric 'Read requests'`); not a quota of pods, of a
    # topic's backlog or of a disk (EDQUOT): what the quota counts decides
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls",
          "quota quotas", "exceeded exhausted", "request requests call calls rpm qps"),
    # ... or any other quota said exceeded (`403 Quota exceeded: Your project exceeded quota for concurrent queries`):
    # after the quotas of resources (pods, CPUs) above; a disk's or a file system's quota (EDQUOT) is no dependency's,
    # nor a topic's backlog quota (a broker's: its consumers lag, queue_backlog's idea reads it)
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls", "quota quotas", "exceeded exhausted",
          unless="disk disks storage space bytes inodes file files filesystem volume volumes pods pod cpu cpus memory "
                 "backlog lag topic topics subscription queue queues"),
    # ... or a per-tenant limit said exceeded (`per-user series limit of 150000 exceeded`): a tenant's quota at the
    # dependency, not a pool's or a process's own limit
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls", "per",
          "user users tenant tenants account accounts project projects org organization customer",
          "limit limits", "exceeded exceeds", unless="connection connections conn conns memory heap disk"),
    # ... or a dependency's limit of requests said hit (`hit the request limit of the geocoding API`): not a request's
    # size limit (a payload too large) nor a pool's or a process's own
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls", "request requests call calls",
          "limit limits", "hit reached exceeded",
          # (nor a server's own worker limit its requests wait on: `reached the max workers limit (16), requests wait`)
          unless="size bytes body payload length header headers connection connections memory heap worker workers "
                 "thread threads process processes children clients queue"),
    # ... or too many calls said (HTTP's `Too Many Requests`, gRPC's GOAWAY `too_many_pings`)
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls", "too", "many", "requests pings calls"),
    # ... or HTTP's own status for it, said as a status (`got 429 from the API`), whatever words follow
    _idea("upstream_rate_limited", "a dependency limiting the rate of calls", "429",
          "error status code http response returned received got answered failed"),
    _idea("connection_refused", "a connection refused",
          "refused refusing", "connection connections connect connecting"),
    # ... or a socket's connect call said to have failed (asyncio's `Connect call failed ('10.0.0.7', 8080)`): after
    # the name's, the certificate's and the timeout's ideas, which say why when they are there
    _idea("connection_refused", "a connection refused", "connect", "call", "failed", unless="timeout timed deadline"),
    # ... or a dependency said not to accept connections, or unreachable, or without a route to it (`ledger is not
    # accepting connections`, `ServiceUnreachableException`, EHOSTUNREACH's `no route to host`): not a line of code
    # said unreachable
    _idea("connection_refused", "a connection refused", "not no", "accepting accept accepts",
          "connection connections connect"),
    _idea("connection_refused", "a connection refused", "unreachable",
          "host network service server destination endpoint broker node peer", unless="code statement"),
    _idea("connection_refused", "a connection refused", "no", "route", "host"),
    # a call past its deadline, said in words (`GET .../rates exceeded its 8s deadline`): after the refusal's ideas (a
    # deadline run out while the dial was refused is the refusal's), and not an acquire's deadline (a pool's or a
    # lock's wait: `pgxpool acquire: context deadline exceeded`)
    _idea("upstream_timeout", "a call to a dependency timing out", "deadline", "exceeded exceeds passed missed",
          unless="acquire acquiring acquisition checkout lock locks"),
    # a payload its reader cannot decode: the verb of reading a format and what was read
    _idea("serialization_error", "a payload that cannot be decoded",
          "decode decoding deserialize deserializing deserialization unmarshal unmarshaling unmarshalling "
          "parse parsing",
          # ... or what the reader expected of it (`parsing Number failed, expected Number, but encountered String`)
          "body json payload response content value xml record message bytes expected encountered field struct type"),
    # ... or a reader's type expected and another found (`Expected a string but was NULL at path $.sku`,
    # `Expected BEGIN_OBJECT but was STRING`)
    _idea("serialization_error", "a payload that cannot be decoded",
          "expected", "but", "was got found encountered",
          "string number object array boolean int integer long double token begin path"),
    # ... or a format's value that cannot be converted to the type read (`The JSON value could not be converted to
    # System.Decimal`)
    _idea("serialization_error", "a payload that cannot be decoded", "json xml yaml protobuf avro msgpack",
          "convert converted conversion", "not cannot unable failed"),
    # ... or a value its reader has no variant or field for, naming what it expected (`unknown variant `X`, expected one
    # of ...`, `unknown field `y`, expected ...`)
    _idea("serialization_error", "a payload that cannot be decoded", "unknown", "variant variants field fields enum",
          "expected expecting"),
    # ... or a type said invalid where another was expected (`invalid type: map, expected a sequence`), not a setting's
    _idea("serialization_error", "a payload that cannot be decoded", "invalid", "type", "expected",
          unless="setting settings config configuration option options env environment"),
    # a bounded buffer, executor or descriptor table full: a client's own limit, not a database pool
    _idea("resource_exhaustion", "a buffer, executor or descriptor limit reached",
          # (or starved of them: `This could be caused by thread pool starvation`)
          "overflow overflowed exhausted exhaustion rejected full insufficient starvation starved",
          "buffer executor thread threads descriptor descriptors handles bulkhead semaphore"),
    # ... or a kernel's table full, its packets dropped (`nf_conntrack: table full, dropping packet`, `neighbour table
    # overflow`): a host's bound on tracked connections or neighbours, not a database's table
    _idea("resource_exhaustion", "a buffer, executor or descriptor limit reached", "table", "full overflow",
          "dropping dropped drop packet packets"),
    # a server's own worker or process limit reached (`server reached pm.max_children setting`, `reached
    # MaxRequestWorkers`): its callers' timeouts are what it causes
    _idea("resource_exhaustion", "a server's worker or process limit reached",
          # ... or a scheduler's task capacity (`scheduler queue capacity reached, 5000 tasks waiting`)
          # (not a call's retries used up, nor a task's memory limit: out_of_memory's idea reads that)
          "reached exceeded", "max maximum limit capacity",
          # ... or its clients' (Redis' `ERR max number of clients reached`)
          "children workers processes threads task tasks scheduler clients",
          unless="retries retry attempts attempt memory heap ram"),
    # ... or too many of them (`Too many processes (system_limit)`)
    _idea("resource_exhaustion", "a server's worker or process limit reached", "too", "many",
          "processes threads children workers"),
    # a stream's or queue's length past its maximum (`queue length exceeds max-length, messages dropped`,
    # `maximum messages exceeded for stream ORDERS`): a backlog its consumers did not take
    # (not a job's attempts used up: Laravel's `Queue\MaxAttemptsExceededException`)
    # not enough of a process's own bounded things free (.NET's `There were not enough free threads in the ThreadPool to
    # complete the operation`): its threads, handles or ports used up; not memory's or a disk's (their ideas)
    _idea("resource_exhaustion", "a buffer, executor or descriptor limit reached", "not", "enough",
          "thread threads threadpool worker workers descriptor descriptors handles sockets ports",
          unless="memory heap disk space"),
    _idea("queue_backlog", "consumers lagging behind their queue", "queue queues stream streams",
          "length messages msgs depth", "exceeded exceeds exceed reached",
          unless="size bytes payload record attempts attempt retries retry tries"),
    _idea("disk_full", "a device or volume with no space left", "space", "left device disk volume storage"),
    # (Ceph's object storage daemons are its disks: `HEALTH_ERR 1 full osd(s)`)
    _idea("disk_full", "a device or volume with no space left",
          "disk volume filesystem partition storage drive drives osd osds", "full"),
    # (or said low: RabbitMQ's `connection blocked: low on memory`)
    # (or the heap said exhausted: `HeapSpaceExhausted`)
    _idea("out_of_memory", "memory exhausted", "memory heap", "out exhausted insufficient allocate oom low"),
    # a memory circuit breaker tripped (Elasticsearch's `CircuitBreakingException: [parent] Data too large, data for
    # [<http_request>] would be [...], which is larger than the limit of [...]`): the heap's budget refused the request;
    # not a call circuit breaker opened (resilience4j's `CircuitBreaker 'x' is OPEN`), which says no size
    _idea("out_of_memory", "memory exhausted", "breaker breaking", "data", "large larger"),
    # an allocation of a stated size refused (`cannot allocate vector of size 11.8 Gb`, `failed to allocate 4096 bytes`)
    _idea("out_of_memory", "memory exhausted", "allocate allocation", "cannot unable failed failure",
          "size bytes vector heap gb mb kb"),
    # C++'s failed allocation (`std::bad_alloc`), or a memory limit exceeded (`Container killed ... for exceeding
    # memory limits`, `Memory limit exceeded`)
    _idea("out_of_memory", "memory exhausted", "alloc", "bad"),
    # the kernel's OOM killer named (systemd's `Failed with result 'oom-kill'`, `oom_kill` in a cgroup's events)
    _idea("out_of_memory", "memory exhausted", "oom", "kill killed killer"),
    _idea("out_of_memory", "memory exhausted", "memory", "exceeding exceeded exceeds exceed", "limit limits"),
    # ... or a store's space said exceeded (etcd's `mvcc: database space exceeded`), not an address space's
    _idea("disk_full", "a device or volume with no space left", "space", "exceeded exhausted",
          unless="address memory heap buffer buffers"),
    # after memory's: space not enough for a write (`Cannot reserve 1.00 MiB, not enough space`)
    _idea("disk_full", "a device or volume with no space left", "space", "enough insufficient", "not no",
          unless="buffer buffers memory heap ram"),
    _idea("queue_backlog", "consumers lagging behind their queue",
          "lag lagging backlog", "consumer consumers queue topic partition messages"),
    # ... or a consumer put out of its group for processing too slowly (`consumer kicked from group: processing exceeded
    # max.poll.interval.ms`): its partitions' messages wait meanwhile; not one that left on its own shutdown
    _idea("queue_backlog", "consumers lagging behind their queue", "consumer consumers member members",
          "kicked removed evicted expelled fenced", "group groups",
          unless="shutdown shutting close closing closed stopped stopping graceful"),
    # ... or a queue's latency or its oldest message's age said past its bound (Sidekiq's queue `latency`, SQS's age of
    # the oldest message): work waits in it longer than allowed; not an executor's queue (resource_exhaustion's)
    _idea("queue_backlog", "consumers lagging behind their queue", "queue queues", "latency age",
          "exceeds exceeded exceed above", unless="executor thread threads"),
    # ... or a message queue said full (`Producer send queue is full`): not an executor's or a pool's queue of tasks
    # (resource_exhaustion's, read above when it names them)
    _idea("queue_backlog", "consumers lagging behind their queue", "queue queues", "full",
          unless="executor thread threads pool worker workers task tasks accept backlog syn"),
    # ... or said not to drain what is sent to it (`dropped 4000 messages: the receiver is not draining`)
    _idea("queue_backlog", "consumers lagging behind their queue",
          "draining", "not stalled stopped", unless="node nodes pod pods"),  # not a cluster's node drain
    # ... or its consumers said unable to keep up with it (`workers cannot keep up`)
    _idea("queue_backlog", "consumers lagging behind their queue", "keep keeping", "up", "not cannot unable"),
    # a setting the code needs and cannot find: the configuration's word and its absence
    _idea("config_missing", "a required setting not found",
          "configuration config property placeholder variable",
          # "unable", "missing", or the remedy that says so: "by adding 'x.y.url' to your configuration"
          "missing required unable unresolved undefined unset absent add adding find found"),
    # a setting named and said not given (`The conn_id `x` isn't defined`, `No server certificate was specified`,
    # `Certificate path not configured`); a script's `name 'x' is not defined` names a variable of code, not a setting
    _idea("config_missing", "a required setting not found",
          "conn setting settings option options parameter env environment certificate cert path",
          "specified configured defined", "not no isn never", unless="referenceerror nameerror"),
    # ... or a setting said required and empty or missing (`required setting PAYMENTS_URL is empty`)
    _idea("config_missing", "a required setting not found", "setting settings", "empty blank unset missing required",
          unless="optional default defaults defaulting fallback"),  # (an optional one, its default taken, is fine)
    # an environment variable said not set (`environment variable DATABASE_URL is not set`)
    _idea("config_missing", "a required setting not found",
          "env environment variable variables", "set", "not isn never"),
    # a data file the service was given to load said missing (postfix's `fatal: open database /etc/postfix/sasl_passwd.db:
    # No such file or directory`, ClamAV's `cli_loaddbdir: No supported database files found in /var/lib/clamav`): not a
    # table's or a column's (the schema's), nor a database file locked
    _idea("config_missing", "a file the service needs not found", "database databases", "file files",
          "no not missing", unless="table tables column columns locked lock"),
    # a secret the code needs left unset: an encryption, signing or API key missing (a class's name keeps its
    # words: `MissingSigningKeyError`)
    _idea("config_missing", "a required key or secret not set",
          "encryption signing secret api app jwt", "key keys secret", "missing unset absent empty"),
    # ... or a secret said not found or not set where it is kept (`Secret JWT_SECRET not found in secret store`)
    _idea("config_missing", "a required key or secret not set", "secret secrets", "not no",
          "found set provided defined present given"),
    # a setting a configuration's validation says must not be null or empty (`config.yml has an error: db.url must not
    # be null`): not a record's field
    _idea("config_missing", "a required setting not found", "configuration config settings yml yaml properties",
          "must", "null empty blank", unless="record records row rows order orders request payload body"),
    # versions that do not fit together (`locked provider ... 4.67.0 does not match configured version
    # constraint`, `incompatible version`): a lock file or a dependency's pin against what is required
    _idea("dependency_mismatch", "versions that do not fit together",
          # ... or a resolver finding none (`no available releases match the given constraints`, `version solving failed`)
          "version versions release releases", "incompatible mismatch mismatched constraint constraints satisfy "
          "satisfies solving"),
    # ... or a version needed and another found (`this version of grpcio needs protobuf>=4.21, found 3.20`), or a
    # version said no longer supported by what it calls (`API version v1 no longer supported`): not a protocol's
    # version (a handshake's: the TLS ideas read those), nor one deprecated
    _idea("dependency_mismatch", "versions that do not fit together", "version versions", "needs requires require need",
          "found installed got have has"),
    _idea("dependency_mismatch", "versions that do not fit together", "version versions",
          # (a deprecation is a warning of a future removal, not a version refused now)
          "supported unsupported", "no not longer unsupported", unless="protocol deprecated deprecation future"),
    # ... or a module or package the running code calls not there (`module Jason is not available`, `No module named
    # 'x'`, `Cannot find module 'y'`): the release lacks a dependency the code was built against
    _idea("dependency_mismatch", "versions that do not fit together", "module modules package packages gem gems",
          "available loaded found find named", "not no cannot unable"),
    # ... or a native library the program links against not there (the dynamic loader's `error while loading shared
    # libraries: libssl.so.1.1: cannot open shared object file`, the JVM's `UnsatisfiedLinkError: no netty_epoll in
    # java.library.path`): the image lacks a system library the code was built against, as a module not found; not
    # shared memory, a shared file or a link on a page
    _idea("dependency_mismatch", "versions that do not fit together", "shared", "object objects library libraries",
          "cannot open loading load", unless="memory segment"),
    _idea("dependency_mismatch", "versions that do not fit together", "unsatisfied", "link"),
    # ... or packages' requirements of each other in conflict (`conflicting peer dependency`, `dependency tree`)
    _idea("dependency_mismatch", "versions that do not fit together", "dependency dependencies",
          "conflict conflicting conflicts tree peer"),
    # ... or code built against one version of a library calling what the version it runs with lacks (`NoSuchMethodError`,
    # `Method not found`, `NoClassDefFoundError`), declaring what that version's interface no longer matches (`must be
    # compatible with`), or a library of another version than it was built against not loading (`Could not load
    # file or assembly`): a mismatch only beside a line saying a version changed
    _idea("dependency_mismatch", "versions that do not fit together", "method methods field class def",
          "no not missing", "found such", changed=True),
    _idea("dependency_mismatch", "versions that do not fit together", "compatible incompatible",
          "must declaration signature interface", changed=True),
    _idea("dependency_mismatch", "versions that do not fit together", "load loaded loading",
          "assembly assemblies library libraries", changed=True),
    # a settings object's own validation failing (.NET's `OptionsValidationException: DataAnnotation validation failed
    # for 'MailOptions' members: 'Server' ... is required`): its configuration left out or wrong, not a record's data
    _idea("config_missing", "a required setting not found", "option options setting settings configuration config",
          "validation validate validated", "failed fails required invalid missing",
          unless="record records row rows request requests payload body input form entity order orders"),
    # data that breaks the model's own rules: a record failing its validation or a constraint (the last:
    # a certificate's or a setting's validation is read by the ideas above)
    _idea("data_integrity", "a record breaking its validation or a constraint",
          "validation constraint constraints duplicate",
          # (or a constraint named by its kind rejecting a row: `NOT NULL constraint on shipments.address_id`)
          "failed fails violated violates violation required invalid key entry null unique foreign rejected"),
    # ... or a row a delete or update would orphan, said still referenced (`cannot delete customer 88: still referenced
    # by invoices.customer_id`)
    _idea("data_integrity", "a record breaking its validation or a constraint", "still", "referenced"),
    # ... or a unique constraint or index said to have stopped a write (`constraint error when attempting to insert
    # struct: users_email_index (unique_constraint)`)
    _idea("data_integrity", "a record breaking its validation or a constraint", "unique uniqueness",
          "constraint constraints index", "error insert inserting update updating"),
    # a member, method or index of a null read (`Null check operator used on a null value`, `attempt to index a
    # nil value`, `Unexpectedly found nil while unwrapping`): after the constraint's idea, so a not-null
    # constraint's `null value in column` stays data
    _idea("null_reference", "a null read as an object",
          "null nil none nonetype nullptr", "operator method index dereference dereferencing pointer property "
          # (or said unexpected where a value was read: `unexpected null: shippingAddress on order 912`)
          # (or a null reference said by its name: `NullRefError: customer.address is null`)
          "properties attribute member unwrap unwrapping unexpected reference ref"),
    # ... or a property or field read before anything set it (Kotlin's `lateinit property x has not been initialized`,
    # `UninitializedPropertyAccessException`): not a setting's, which config_missing's ideas read
    _idea("null_reference", "a null read as an object", "property properties field fields member members lateinit",
          "initialized initialised uninitialized uninitialised", "not before uninitialized uninitialised lateinit",
          unless="configuration config setting settings option options env environment"),
    # ... or an undefined value's (Perl's `Can't call method "x" on an undefined value`; not PHP's
    # `Call to undefined method`, which names no value)
    _idea("null_reference", "a null read as an object",
          "undefined", "value object", "method property properties index"),
)
