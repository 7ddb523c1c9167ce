package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type proc struct {
	host    string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
	exitAt  time.Time
	ready   Ready
	killed  bool // SIGKILLed by the fault schedule
	forced  bool // SIGKILLed by the launcher at the end-of-run deadline
	paused  bool
	logPath string
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// start launches host's process in its own process group, with its log in dir.
func (l *launcher) start(host, strategy, dir string, join []string) (*proc, error) {
	args := append(slices.Clone(l.cfg.Args),
		"--config", l.expFile, "--strategy", strategy, "--seed", strconv.FormatUint(l.exp.Seed, 10),
		"--host", host, "--out", dir, "--await-start",
	)
	args = append(args, l.addrFlags(host)...)
	if l.cfg.Profile != "" {
		args = append(args, "--profile", l.cfg.Profile)
	}
	if len(l.cfg.Secret) == 0 {
		args = append(args, "--insecure")
	}
	if l.exp.Options().AllowLarge {
		args = append(args, "--allow-large")
	}
	for _, j := range join {
		args = append(args, "--join", j)
	}
	if pd := l.cfg.CPUProfileDir; pd != "" {
		pd, err := filepath.Abs(filepath.Join(pd, filepath.Base(dir)))
		if err != nil {
			return nil, fmt.Errorf("start node %s: profile directory: %w", host, err)
		}
		if err := os.MkdirAll(pd, 0o755); err != nil {
			return nil, fmt.Errorf("start node %s: profile directory: %w", host, err)
		}
		args = append(args, "--cpuprofile", filepath.Join(pd, host+".cpu.pprof"))
	}
	logPath := filepath.Join(dir, host+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	exe, args := l.command(host, args)
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = append(os.Environ(), l.cfg.Env...)
	cmd.Env = slices.DeleteFunc(cmd.Env, func(s string) bool { return strings.HasPrefix(s, SecretEnv+"=") })
	if len(l.cfg.Secret) > 0 {
		cmd.Env = append(cmd.Env, SecretEnv+"="+string(l.cfg.Secret))
	}
	// Own process group: Ctrl-C reaches only the launcher, which stops the
	// children in order; Pdeathsig kills a child if the launcher dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start node %s: %w", host, err)
	}
	p := &proc{host: host, cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() {
		p.err = cmd.Wait()
		p.exitAt = time.Now()
		lf.Close()
		close(p.done)
	}()
	return p, nil
}

func (l *launcher) waitReady(ctx context.Context, p *proc, by time.Time) error {
	path := ReadyFile(filepath.Dir(p.logPath), p.host)
	for {
		if b, err := os.ReadFile(path); err == nil {
			if err := json.Unmarshal(b, &p.ready); err != nil {
				return fmt.Errorf("node %s: ready file: %w", p.host, err)
			}
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("node %s exited during startup: %v\n%s", p.host, p.err, tail(p.logPath, 10))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(by) {
			return fmt.Errorf("node %s not ready in time (raise --startup); its log:\n%s", p.host, tail(p.logPath, 10))
		}
	}
}

// cleanup stops every process still running: SIGCONT first for paused
// ones, then SIGTERM, then SIGKILL after 2 s. No orphan is left behind.
func (l *launcher) cleanup(ps map[string]*proc) {
	var live []*proc
	for _, p := range ps {
		select {
		case <-p.done:
			continue
		default:
		}
		live = append(live, p)
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGCONT)
		_ = syscall.Kill(-pid, syscall.SIGTERM)
	}
	if len(live) == 0 {
		return
	}
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	for _, p := range live {
		select {
		case <-p.done:
		case <-t.C:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	for _, p := range live {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
}

// post sends a JSON body to a node's control endpoint.
func (l *launcher) post(p *proc, path string, body any) error {
	if p.ready.Metrics == "" {
		return fmt.Errorf("%s: no control endpoint", p.host)
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, "http://"+p.ready.Metrics+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	signRequest(req, DeriveKeys(l.cfg.Secret), b, time.Now())
	c := controlClient(2 * time.Second)
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s to %s: %w", path, p.host, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("POST %s to %s: %s: %s", path, p.host, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// postAll posts the same body to every node concurrently.
func (l *launcher) postAll(ps map[string]*proc, path string, body any) error {
	var wg sync.WaitGroup
	errs := make([]error, 0, len(ps))
	var mu sync.Mutex
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.post(p, path, body); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitMembership waits until every node sees all n hosts as members.
func (l *launcher) waitMembership(ctx context.Context, ps map[string]*proc, n int, by time.Time) error {
	c := controlClient(time.Second)
	defer c.CloseIdleConnections()
	keys := DeriveKeys(l.cfg.Secret)
	for _, h := range sortedHosts(ps) {
		p := ps[h]
		for {
			var hz struct {
				Members []string `json:"members"`
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.ready.Metrics+"/members", nil)
			if err != nil {
				return err
			}
			signRequest(req, keys, nil, time.Now())
			resp, err := c.Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				err = fmt.Errorf("GET /members: %s", resp.Status)
			}
			if err == nil {
				err = json.NewDecoder(resp.Body).Decode(&hz)
				resp.Body.Close()
			}
			if err == nil && len(hz.Members) >= n {
				break
			}
			if time.Now().After(by) {
				return fmt.Errorf("node %s sees %d of %d members (raise --startup): %v; its log:\n%s", h, len(hz.Members), n, err, tail(p.logPath, 10))
			}
			if err := sleepUntil(ctx, time.Now().Add(10*time.Millisecond)); err != nil {
				return err
			}
		}
	}
	return nil
}

// tail returns the last n lines of a log file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
