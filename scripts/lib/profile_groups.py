"""Windlass's share of a perf profile by kind of work: python3 profile_groups.py perf.data
(samples of the windlass-rt threads, grouped by symbol name patterns)."""
import re, subprocess, sys
out = subprocess.run(["perf","report","-i",sys.argv[1],"--comm","windlass-rt","--sort","sym","--no-children","--stdio"],capture_output=True,text=True).stdout
cats = [
 ("SQLite (VDBE, b-tree, WAL, page cache, its JSON)", r"sqlite3|^wal|pcache|Btree|btree|balance_|jsonT|json[A-Z]|Vdbe|vdbe|sqlite|^moveTo|^insertCell|^fillInCell|^pager|^getAndInitPage|^memjrnl|^sqlite3Pcache|^accessPayload|^rebuildPage|^decodeFlags|^btreeParseCell|^jsonParse|^jsonEach|^jsonBlob|^jsonReturn"),
 ("kernel: file writes / page cache (WAL, checkpoint)", r"ext4|filemap|folio|jbd2|iomap|generic_perform_write|block_write|mark_buffer|__block_commit|pwrite|fsync|file_write|writeback"),
 ("kernel: network (loopback TCP)", r"tcp|skb|netif|ip_|sock|inet|__dev_queue|loopback|net_rx|napi|__sys_sendto|__sys_recvfrom"),
 ("kernel: scheduling, wake-ups, futex, epoll", r"schedule|spin_unlock|futex|try_to_wake|epoll|ttwu|enqueue|dequeue|finish_task|pick_next|update_curr|psi_|_raw_spin|__switch_to|select_task|smp_call"),
 ("kernel: memory (faults, pages)", r"page_fault|clear_page|do_anonymous|memcg|mm_|alloc_pages|free_unref|__rmqueue|folio_add|zap_|unmap|lru"),
 ("allocator (glibc malloc/free)", r"malloc|free|unlink_chunk|_int_|cfree|realloc|tcache|memset|memcpy|memmove"),
 ("serde_json", r"serde_json|serde::"),
 ("HTTP: hyper/http/reqwest/url (server + upstream client)", r"hyper|http::|reqwest|url::|idna|h2::|httparse|tower|axum"),
 ("tokio runtime", r"tokio"),
 ("tracing", r"tracing"),
 ("Windlass code", r"windlass"),
]
tot = {}; total = 0.0
for line in out.splitlines():
    m = re.match(r"\s+([\d.]+)%\s+\[(.)\]\s+(.*)", line)
    if not m: continue
    pct, kind, sym = float(m.group(1)), m.group(2), m.group(3).strip()
    total += pct
    for name, pat in cats:
        if re.search(pat, sym):
            tot[name] = tot.get(name, 0) + pct; break
    else:
        key = "other kernel" if kind == "k" else "other user"
        tot[key] = tot.get(key, 0) + pct
for k, v in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"{100*v/total:5.1f} %  {k}")
