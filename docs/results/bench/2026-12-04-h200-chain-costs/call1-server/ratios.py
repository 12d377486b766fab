"""The server's tokens/s as a share of in-process, from one openai-queues*.txt.

Each file holds the loadgen runs through gRPC, /v1/chat/completions and
/v1/completions (64 streams x 256 tokens at once) and tandem-bench's lines at
N = 64 with the same prompt lengths (128 tokens, then the chat run's mean
prompt). In-process tokens/s = 64 x 256 / (TTFT p50 + 255 x step).
Usage: python3 ratios.py openai-queues*.txt
"""
import re
import sys

BENCH = re.compile(r"^gpt2\s+double_buffered_graphs\s+64\s+([\d.]+)\s+\d+\s+\S+\s+\S+\s+\S+\s+([\d.]+)",
                   re.M)
for path in sys.argv[1:]:
    text = open(path).read()
    benches = BENCH.findall(text)  # (us per step, TTFT p50 ms): prompt 128, then chat's
    refs = [64 * 256 / ((float(ttft) * 1e3 + 255 * float(step)) * 1e-6) for step, ttft in benches]
    cells = []
    for api in ("grpc", "chat", "completions"):
        served = re.search(r"## %s: 64 at once.*?\nrequests.*?req/s, ([\d.]+) output tokens/s" % api,
                           text, re.S)
        ref = refs[1] if api == "chat" else refs[0]
        cells.append("%s %.1f%% (%.0f / %.0f tokens/s)" % (api, 100 * float(served.group(1)) / ref,
                                                           float(served.group(1)), ref))
    print(path, " | ".join(cells))
