#!/usr/bin/env python3
"""
A/B runs for tunnel performance attempts (docs/tunnel-performance.md): variants side by side, in
one run, rounds rotated, medians. Each variant is a compiled `dist` directory and its node flags:

    npx tsc -p tsconfig.build.json --outDir .exp/before   # (then change the code)
    npx tsc -p tsconfig.build.json --outDir .exp/after && node hack/bundle.js .exp/after   # bundled, as npm run build does
    python3 hack/bench-ab.py before=.exp/before:--max-semi-space-size=16 after=.exp/after:--max-semi-space-size=16

(build directories must lie inside the checkout so that node_modules resolve). One backend
(bench/tunnel/backend-server.ts) serves every variant; each variant gets its own `tuna edge`
and `tuna http` agent over a TLS tunnel on loopback. Per round and variant: wrk (64 connections,
/1k) for req/s, with the CPU time edge and agent spent per request (utime + stime of all their
threads, from /proc); h2load at a fixed rate for p50/p99; optionally one download and one upload.
Environment: ROUNDS (3), SECS (4), RPS (2000), DL (bytes per transfer, 0 skips; 256 MiB),
AGENT_ARGS (JSON: variant name -> extra `tuna http` flags, e.g. policies; every agent runs with
`--inspect=false`: the request inspector listens on one port, 4040, which only the first variant's
agent would get, and its recording costs about 4 KB per request; and as one process,
`TUNA_PROCESSES=1`, which builds from before the default of one per CPU ignore: a `--processes N`
here overrides it), EDGE_ARGS (JSON: variant
name -> extra `tuna edge` flags, e.g. ["--workers","2"] or ["--http1-forwarding","per-request"]; CPU counts the edge's
worker processes too), HEADER (one more
request header every client sends, e.g. an Authorization for a --basic-auth variant).
Needs wrk, h2load, curl, openssl (hack/bench-tools.sh). Loopback only.
"""
import os, sys, subprocess, time, hashlib, secrets, tempfile, statistics, random, re, signal, json, shutil
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE = subprocess.check_output([os.path.join(ROOT, 'hack', 'node24.sh'), 'which', 'node'], cwd=ROOT).decode().strip()
AGENT_ARGS=json.loads(os.environ.get('AGENT_ARGS','{}')); EDGE_ARGS=json.loads(os.environ.get('EDGE_ARGS','{}')); EXTRA=['-H',os.environ['HEADER']] if os.environ.get('HEADER') else []
ROUNDS=int(os.environ.get('ROUNDS','3')); SECS=int(os.environ.get('SECS','4')); DL=int(os.environ.get('DL','268435456')); RATE=int(os.environ.get('RPS','2000'))
D=tempfile.mkdtemp(prefix='ab-')
procs=[]
def start(args, log, env=None):
    p=subprocess.Popen(args, stdout=open(log,'w'), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}, cwd=ROOT)
    procs.append(p); return p
def cleanup(*a):
    for p in procs:
        try: p.kill()
        except Exception: pass
signal.signal(signal.SIGTERM, lambda *a: (cleanup(), sys.exit(1)))
try:
    subprocess.run(['openssl','req','-x509','-newkey','ec','-pkeyopt','ec_paramgen_curve:prime256v1','-nodes','-days','1','-subj','/CN=127.0.0.1','-addext','subjectAltName=IP:127.0.0.1','-keyout',f'{D}/k.pem','-out',f'{D}/c.pem'],capture_output=True,check=True)
    b=start([NODE,'--no-warnings','bench/tunnel/backend-server.ts'], f'{D}/backend.log')
    for _ in range(100):
        m=re.search(r'"port":(\d+)', open(f'{D}/backend.log').read())
        if m: break
        time.sleep(0.1)
    BP=int(m.group(1))
    variants=[]
    for i,spec in enumerate(sys.argv[1:]):
        name,rest=spec.split('=',1); dist,_,flags=rest.partition(':'); flags=[f for f in flags.split(',') if f]
        key=secrets.token_urlsafe(24); sha=hashlib.sha256(key.encode()).hexdigest()
        hp=21000+random.randint(0,9000)+i*2; tp=hp+1
        open(f'{D}/{name}.yaml','w').write(f'listen:\n  tunnel: {{host: "127.0.0.1", port: {tp}, tls: {{certFile: "{D}/c.pem", keyFile: "{D}/k.pem"}}}}\n  http: {{host: "127.0.0.1", port: {hp}}}\nbindings:\n  - {{id: "binding/host/bench.test", kind: host, hostnames: ["bench.test"], keys: [{{sha256: "{sha}"}}]}}\n')
        e=start([NODE,*flags,f'{dist}/cli/main.js','edge','--config',f'{D}/{name}.yaml',*EDGE_ARGS.get(name,[])], f'{D}/{name}-edge.log')
        time.sleep(1.5)
        a=start([NODE,*flags,f'{dist}/cli/main.js','http',str(BP),'--host','bench.test','--edge',f'tls://127.0.0.1:{tp}','--ca',f'{D}/c.pem','--inspect=false',*AGENT_ARGS.get(name,[])], f'{D}/{name}-agent.log', {'TUNA_KEY':key,'TUNA_PROCESSES':'1'})
        for _ in range(100):
            r=subprocess.run(['curl','-s','-o','/dev/null','-w','%{http_code}','-H','Host: bench.test',*EXTRA,f'http://127.0.0.1:{hp}/1k'],capture_output=True,text=True)
            if r.stdout=='200': break
            time.sleep(0.2)
        else: raise SystemExit(f'{name} not ready')
        variants.append(dict(name=name,hp=hp,rps=[],p50=[],p99=[],dl=[],edge=e,agent=a))
    variants.insert(0, dict(name='direct',hp=BP,rps=[],p50=[],p99=[],dl=[],direct=True))
    for r in range(ROUNDS):
        order=variants[r%len(variants):]+variants[:r%len(variants)]
        for v in order:
            host=EXTRA+([] if v.get('direct') else ['-H','Host: bench.test'])
            def cpu(pr, pid=None):
                pid=pid or pr.pid
                f=open(f'/proc/{pid}/stat').read().rsplit(')',1)[1].split()
                kids=[int(k) for k in open(f'/proc/{pid}/task/{pid}/children').read().split()]
                return (int(f[11])+int(f[12]))*10000/1+sum(cpu(None,k) for k in kids)  # ticks(10ms) -> us, with live children (edge workers)
            c0=(cpu(v['edge']),cpu(v['agent'])) if not v.get('direct') else (0,0)
            out=subprocess.run(['wrk','-t2','-c64',f'-d{SECS}s',*host,f'http://127.0.0.1:{v["hp"]}/1k'],capture_output=True,text=True).stdout
            v['rps'].append(float(re.search(r'Requests/sec:\s+([\d.]+)',out).group(1)))
            nreq=int(re.search(r'(\d+) requests in',out).group(1))
            if not v.get('direct'):
                v.setdefault('cpue',[]).append((cpu(v['edge'])-c0[0])/nreq); v.setdefault('cpua',[]).append((cpu(v['agent'])-c0[1])/nreq)
            log=f'{D}/h2.log'
            if os.path.exists(log): os.remove(log)
            subprocess.run(['h2load','--h1','-c','20','-t','1','--rps',str(RATE/20),'-D',str(SECS+1),'--warm-up-time','1','--log-file',log,*EXTRA,*([] if v.get('direct') else ['-H',':authority: bench.test']),f'http://127.0.0.1:{v["hp"]}/1k'],capture_output=True)
            ds=sorted(int(l.split('\t')[2])/1000 for l in open(log) if l.count('\t')>=2)
            pct=lambda q: ds[min(len(ds),max(1,-(-int(q*len(ds)*1000)//1000)))-1]
            v['p50'].append(pct(0.5)); v['p99'].append(pct(0.99))
            if DL:
                out=subprocess.run(['curl','-s','-o','/dev/null','-w','%{speed_download}',*host,f'http://127.0.0.1:{v["hp"]}/bytes/{DL}'],capture_output=True,text=True).stdout
                v['dl'].append(float(out)/1e6)
                up=subprocess.run([NODE,'--no-warnings','bench/tunnel/upload-client.ts',str(v['hp']),str(DL),*([] if v.get('direct') else ['bench.test'])],capture_output=True,text=True,cwd=ROOT).stdout
                j=json.loads(up.strip().splitlines()[-1]); v.setdefault('up',[]).append(DL/j['seconds']/1e6 if j['received']==DL else float('nan'))
        print(f'round {r+1}: '+'  '.join(f'{v["name"]} {v["rps"][-1]:.0f}rps p99 {v["p99"][-1]:.1f}' for v in variants), flush=True)
    print(f'load {os.getloadavg()[0]:.1f}')
    print(f'{"variant":12} {"req/s":>8} {"p50 ms":>8} {"p99 ms":>8} {"dl MB/s":>8} {"up MB/s":>8} {"edge us/r":>9} {"agent us/r":>10}  rounds req/s | p99')
    for v in variants:
        med=lambda xs: statistics.median(xs) if xs else float('nan')
        print(f'{v["name"]:12} {med(v["rps"]):8.0f} {med(v["p50"]):8.2f} {med(v["p99"]):8.2f} {med(v["dl"]):8.0f} {med(v.get("up",[])):8.0f} {med(v.get("cpue",[])):9.0f} {med(v.get("cpua",[])):10.0f}  {"/".join(f"{x:.0f}" for x in v["rps"])} | {"/".join(f"{x:.1f}" for x in v["p99"])}')
finally:
    cleanup()
    shutil.rmtree(D, ignore_errors=True)
