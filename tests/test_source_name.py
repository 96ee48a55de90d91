"""A file's lines whose layout names no service are the file's program's (pipeline/ingest/source_name.py):
Loghub's Apache and Proxifier logs read as `unknown` (walkthrough s51, issue 38)."""
from __future__ import annotations

import pytest

from pipeline.ingest.source_name import service_of_source
from pipeline.sources.file import FileSource
from tests.test_sources_file import MAX, drain


@pytest.mark.parametrize("path, service", [
    ("/logs/Apache_2k.log", "Apache"),                    # a size the sample's name adds
    ("/var/log/app-2024-05-01.log.1", "app"),              # a date and a rotation
    ("nginx.log.gz", "nginx"),
    ("/var/log/httpd/error_log", "httpd"),                 # a kind of log: its folder is whose
    ("/var/log/apache2/access.log", "apache2"),
    ("/var/log/pods/shop_cart-7d9_0a1/cart/0.log", "cart"),
    ("C:\\logs\\orders.log", "orders"),
    ("/var/log/messages", "unknown"),                      # a kind of log in a folder of any program's logs
    ("/var/log/syslog.1", "unknown"),
    ("/tmp/2024.log", "unknown"),
    ("/var/lib/docker/containers/4f2a9b3c1d2e5f6a7b8c/4f2a9b3c1d2e5f6a7b8c-json.log", "unknown"),  # an id
])
def test_a_file_names_the_program_it_is_the_log_of(path, service):
    assert service_of_source(path) == service


def test_lines_whose_layout_names_no_service_are_the_files_program(tmp_path):
    (tmp_path / "httpd").mkdir()
    proxy, web = tmp_path / "Webproxy_2k.log", tmp_path / "httpd" / "error_log"
    # Proxifier's layout: the program a line names is the one it served, not the writer
    proxy.write_text("".join(f"[10.30 16:49:0{n}] chrome.exe - proxy.example.org:5070 error : Could not connect "
                             "through proxy proxy.example.org:5070 - Proxy server cannot establish a connection\n"
                             for n in range(2)))
    web.write_text("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6\n"
                   "[Sun Dec 04 04:47:45 2005] [error] Directory index forbidden by rule: /var/www/html/\n")
    assert {i.service for i in drain(FileSource(proxy, max_bytes=MAX), None)[0]} == {"Webproxy"}
    assert {i.service for i in drain(FileSource(web, max_bytes=MAX), None)[0]} == {"httpd"}
