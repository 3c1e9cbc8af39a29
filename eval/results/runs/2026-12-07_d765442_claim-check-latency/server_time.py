"""Where a claim check's time goes: llama-server's own timings from its log.
    python server_time.py llama-server.log.gz"""
import gzip, re, sys
prompt_ms = gen_ms = 0.0
prompt_tokens = tasks = 0
for line in gzip.open(sys.argv[1], "rt"):
    if m := re.search(r"prompt eval time = +([\d.]+) ms / +(\d+) tokens", line):
        prompt_ms += float(m[1]); prompt_tokens += int(m[2]); tasks += 1
    elif m := re.search(r"\beval time = +([\d.]+) ms / +(\d+) tokens", line):
        gen_ms += float(m[1])
print(f"{tasks} requests; prompt tokens read {prompt_tokens} in {prompt_ms / 1000:.1f} s "
      f"({prompt_tokens / prompt_ms * 1000:.0f} tokens/s); generation {gen_ms / 1000:.1f} s")
