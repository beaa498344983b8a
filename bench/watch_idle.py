# CPU of `tally watch --panel off DIR` on N empty event files (`touch`-made), over 5 s after 3 s.
# Usage: python3 bench/watch_idle.py TALLY_BINARY N
import os, sys, subprocess, tempfile, time
bin_, n = sys.argv[1], int(sys.argv[2])
d = tempfile.mkdtemp(prefix='many-')
for i in range(n):
    open(os.path.join(d, f'events.out.tfevents.{1700000000+i}.host.{i}.0'), 'w').close()
def cpu(pid):
    f = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
p = subprocess.Popen([bin_, 'watch', '--panel', 'off', d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(3)
c0, t0 = cpu(p.pid), time.time()
time.sleep(5)
c1, t1 = cpu(p.pid), time.time()
print(f'{n} empty files: {100*(c1-c0)/(t1-t0):.1f}% of a core over {t1-t0:.1f}s')
p.terminate(); p.wait()
import shutil; shutil.rmtree(d)
