# `tally watch RUN` on a pty whose master side is closed after 3 s: does it end, and its CPU if not.
# Usage: python3 bench/watch_hangup.py TALLY_BINARY RUN_DIR ctty|noctty (ctty: the pty is its controlling terminal)
import os, pty, sys, time, subprocess, select, signal
bin_, run, mode = sys.argv[1:4]
def answer(master, buf):
    # answer cursor-position queries like a terminal
    n = buf.count(b'\x1b[6n')
    for _ in range(n):
        os.write(master, b'\x1b[1;1R')
def drain(master, secs):
    end = time.time()+secs
    while time.time() < end:
        r,_,_ = select.select([master],[],[],0.05)
        if r:
            try: b = os.read(master, 65536)
            except OSError: return
            answer(master, b)
def utime(pid):
    f = open(f'/proc/{pid}/stat').read().rsplit(')',1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
env = dict(os.environ, TERM='xterm-256color', LANG='C.UTF-8')
if mode == 'ctty':
    pid, master = pty.fork()
    if pid == 0:
        os.execve(bin_, [bin_, 'watch', run], env)
else:
    master, slave = os.openpty()
    import fcntl, termios, struct
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 100, 0, 0))
    p = subprocess.Popen([bin_, 'watch', run], stdin=slave, stdout=slave, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    os.close(slave)
    pid = p.pid
import fcntl, termios, struct
fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 100, 0, 0))
drain(master, 3)
os.close(master)
t0 = time.time(); u0 = utime(pid)
exited = None
while time.time() - t0 < 5:
    r = os.waitpid(pid, os.WNOHANG)
    if r[0] == pid:
        exited = r[1]; break
    time.sleep(0.05)
if exited is None:
    u1 = utime(pid)
    print(f"{mode}: still running 5 s after the terminal closed; CPU {100*(u1-u0)/(time.time()-t0):.0f}% of a core")
    os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
else:
    print(f"{mode}: exited after {time.time()-t0:.2f}s, status {os.waitstatus_to_exitcode(exited)}")
