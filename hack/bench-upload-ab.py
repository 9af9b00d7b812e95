#!/usr/bin/env python3
"""
Upload A/B (docs/tunnel-performance.md §8.1): one big upload per round and variant, variants
rotated, medians, with the CPU time the edge and the agent spent on it (utime + stime from /proc,
10 ms ticks). Like hack/bench-ab.py without wrk and h2load: one backend (bench/tunnel/backend-server.ts),
per variant one `tuna edge --workers 1 --http1-forwarding <mode>` and one `tuna http` agent over a
TLS tunnel on loopback; bench/tunnel/upload-client.ts PUTs the bytes. A variant is
name=<build dir>:<spliced|per-request> (build dirs inside the checkout, as for bench-ab.py):

    npx tsc -p tsconfig.build.json --outDir .exp/ab
    ROUNDS=9 DL=67108864 python3 hack/bench-upload-ab.py . spliced=.exp/ab:spliced per-request=.exp/ab:per-request

Environment: ROUNDS (5), DL (bytes per upload, 64 MiB), PROF (a directory: --cpu-prof for edges
and agents, written when they exit), AFLAGS (comma-separated extra node flags for the agents, e.g.
--trace-gc), KEEP (a directory to copy the logs to). Loopback only.
"""
import os, sys, subprocess, time, hashlib, secrets, tempfile, statistics, random, re, json, shutil
ROOT=os.path.abspath(sys.argv[1]); SPECS=[a.split('=',1) for a in sys.argv[2:]]  # name=dist:mode
NODE=subprocess.check_output([os.path.join(ROOT,'hack','node24.sh'),'which','node'],cwd=ROOT).decode().strip()
ROUNDS=int(os.environ.get('ROUNDS','5')); DL=int(os.environ.get('DL','67108864')); PROF=os.environ.get('PROF','')
D=tempfile.mkdtemp(prefix='upab-'); procs=[]
def start(args, log, env=None):
    p=subprocess.Popen(args,stdout=open(log,'w'),stderr=subprocess.STDOUT,env={**os.environ,**(env or {})},cwd=ROOT); procs.append(p); return p
def cpu(pid):
    f=open(f'/proc/{pid}/stat').read().rsplit(')',1)[1].split(); return (int(f[11])+int(f[12]))*10  # ms
try:
    subprocess.run(['openssl','req','-x509','-newkey','ec','-pkeyopt','ec_paramgen_curve:prime256v1','-nodes','-days','1','-subj','/CN=127.0.0.1','-addext','subjectAltName=IP:127.0.0.1','-keyout',f'{D}/k.pem','-out',f'{D}/c.pem'],capture_output=True,check=True)
    start([NODE,'--no-warnings','bench/tunnel/backend-server.ts'],f'{D}/backend.log')
    for _ in range(100):
        m=re.search(r'"port":(\d+)',open(f'{D}/backend.log').read())
        if m: break
        time.sleep(0.1)
    BP=int(m.group(1)); vs=[]
    for i,(name,spec) in enumerate(SPECS):
        DIST,mode=spec.rsplit(':',1); DIST=os.path.abspath(DIST)
        key=secrets.token_urlsafe(24); sha=hashlib.sha256(key.encode()).hexdigest(); hp=21000+random.randint(0,9000)+i*2; tp=hp+1
        open(f'{D}/{name}.yaml','w').write(f'listen:\n  tunnel: {{host: "127.0.0.1", port: {tp}, tls: {{certFile: "{D}/c.pem", keyFile: "{D}/k.pem"}}}}\n  http: {{host: "127.0.0.1", port: {hp}}}\nbindings:\n  - {{id: "binding/host/bench.test", kind: host, hostnames: ["bench.test"], keys: [{{sha256: "{sha}"}}]}}\n')
        prof=['--cpu-prof',f'--cpu-prof-dir={PROF}/{name}'] if PROF else []
        e=start([NODE,'--max-semi-space-size=16',*prof,f'{DIST}/cli/main.js','edge','--config',f'{D}/{name}.yaml','--workers','1','--http1-forwarding',mode],f'{D}/{name}-edge.log')
        time.sleep(1.5)
        a=start([NODE,'--max-semi-space-size=16',*prof,*[f for f in os.environ.get('AFLAGS','').split(',') if f],f'{DIST}/cli/main.js','http',str(BP),'--host','bench.test','--edge',f'tls://127.0.0.1:{tp}','--ca',f'{D}/c.pem','--inspect=false'],f'{D}/{name}-agent.log',{'TUNA_KEY':key,'TUNA_PROCESSES':'1'})
        for _ in range(100):
            r=subprocess.run(['curl','-s','-o','/dev/null','-w','%{http_code}','-H','Host: bench.test',f'http://127.0.0.1:{hp}/1k'],capture_output=True,text=True)
            if r.stdout=='200': break
            time.sleep(0.2)
        else: raise SystemExit(f'{mode} not ready: '+open(f'{D}/{name}-edge.log').read()[-2000:])
        vs.append(dict(name=name,hp=hp,e=e,a=a,up=[],ce=[],ca=[]))
    vs.insert(0,dict(name='direct',hp=BP,up=[],ce=[],ca=[]))
    for r in range(ROUNDS):
        for v in vs[r%len(vs):]+vs[:r%len(vs)]:
            c0=(cpu(v['e'].pid),cpu(v['a'].pid)) if 'e' in v else (0,0)
            out=subprocess.run([NODE,'--no-warnings','bench/tunnel/upload-client.ts',str(v['hp']),str(DL),*([] if v['name']=='direct' else ['bench.test'])],capture_output=True,text=True,cwd=ROOT).stdout
            j=json.loads(out.strip().splitlines()[-1]); v['up'].append(DL/j['seconds']/1e6 if j['received']==DL else float('nan'))
            if 'e' in v: v['ce'].append(cpu(v['e'].pid)-c0[0]); v['ca'].append(cpu(v['a'].pid)-c0[1])
        print(f'round {r+1}: '+'  '.join(f'{v["name"]} {v["up"][-1]:.0f} MB/s' for v in vs),f'load {os.getloadavg()[0]:.2f}',flush=True)
    med=lambda xs: statistics.median(xs) if xs else float('nan')
    print(f'load {os.getloadavg()[0]:.2f}')
    for v in vs: print(f'{v["name"]:12} up {med(v["up"]):6.0f} MB/s  edge cpu {med(v["ce"]):6.0f} ms  agent cpu {med(v["ca"]):6.0f} ms  rounds {"/".join(f"{x:.0f}" for x in v["up"])}  agent cpu rounds {"/".join(str(x) for x in v["ca"])}')
finally:
    for p in procs:
        try: p.terminate()
        except Exception: pass
    for p in procs:
        try: p.wait(timeout=15 if PROF else 1)
        except Exception: pass
    for p in procs:
        try: p.kill()
        except Exception: pass
    if os.environ.get('KEEP'): shutil.copytree(D, os.environ['KEEP'], dirs_exist_ok=True)
    shutil.rmtree(D,ignore_errors=True)
