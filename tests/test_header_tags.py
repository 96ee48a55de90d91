"""Header text stays out of the message (no header text in any incident title): a
syslog tag with a version or behind a `--` marker, and a log4j logger without a package in a file
whose every line names its logger. Lines are Loghub's (Linux, Spark); the rules are general."""
from __future__ import annotations

from pipeline.ingest.formats import SourceParser

SPARK = [
    "17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend: Registered signal handlers for [TERM, HUP, INT]",
    "17/06/09 20:10:40 INFO spark.SecurityManager: Changing view acls to: yarn,curi",
    "17/06/09 20:10:41 INFO slf4j.Slf4jLogger: Slf4jLogger started",
    "17/06/09 20:10:41 INFO Remoting: Starting remoting",
    "17/06/09 20:10:41 INFO Remoting: Remoting started; listening on addresses :[akka.tcp://sparkExecutor@mesos-slave-07:55904]",
    "17/06/09 20:10:41 INFO util.Utils: Successfully started service 'sparkExecutorActorSystem' on port 55904.",
]
LINUX = [
    "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh",
    "Jun 19 04:09:11 combo syslogd 1.4.1: restart.",
    "Jul  7 08:06:15 combo  -- root[2421]: ROOT LOGIN ON tty2",
    "Jun 15 04:06:18 combo su(pam_unix)[21416]: session opened for user cyrus by (uid=0)",
]


def _parsed(lines):
    parser = SourceParser()
    parser.detect(lines)
    return parser, [parser.parse(line) for line in lines]


def test_a_log4j_logger_without_a_package_is_the_header_s_logger():
    # the file's first lines (nearly) all name a dotted logger: the column is the logger's
    parser, records = _parsed(SPARK + [SPARK[0], SPARK[1], SPARK[2], SPARK[5]] * 4)
    assert parser.format == "log4j" and parser.logger_column
    assert records[3].message == "Starting remoting" and records[3].service == "Remoting"
    assert records[4].message.startswith("Remoting started; listening")
    assert records[0].message.startswith("Registered signal handlers")  # dotted loggers as before


def test_a_name_and_colon_stays_in_the_message_where_lines_have_no_logger_column():
    lines = ["2024-01-02 03:04:05,123 ERROR Connection: refused by db-1:5432",
             "2024-01-02 03:04:06,123 INFO started in 2.1 s", "2024-01-02 03:04:07,123 WARN slow request 2.3 s"]
    _, records = _parsed(lines)
    assert records[0].message == "Connection: refused by db-1:5432"


def test_a_syslog_tag_with_a_version_or_a_marker_is_header():
    parser, records = _parsed(LINUX)
    assert parser.format == "syslog"
    assert records[1].message == "restart." and records[1].service == "syslogd"
    assert records[2].message == "ROOT LOGIN ON tty2" and records[2].service == "root"
    assert records[0].message.startswith("authentication failure") and records[0].service == "sshd(pam_unix)"
