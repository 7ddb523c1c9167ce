package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServeStaysInsideItsRoot runs the attacks on 'streamha serve': links
// out of the root (to / and to a system file), a link to /dev/zero, a FIFO
// named result.json, a file above the size bound and a foreign Host
// header. Nothing outside the root is served, the index does not hang,
// and every refusal comes at once.
func TestServeStaysInsideItsRoot(t *testing.T) {
	root := t.TempDir()
	mk := func(name, body string) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	mk("run/ok.txt", "inside\n")
	require.NoError(t, os.Symlink("/", filepath.Join(root, "escape")))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(root, "passwd")))
	require.NoError(t, os.Symlink("run", filepath.Join(root, "inner"))) // like streamha-out/latest
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(root, "run", "zero.jsonl")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "fifo"), 0o755))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo", "result.json"), 0o600))
	big, err := os.Create(filepath.Join(root, "run", "big.jsonl"))
	require.NoError(t, err)
	require.NoError(t, big.Truncate(maxServedFile+1)) // sparse
	require.NoError(t, big.Close())

	srv := httptest.NewServer(nil)
	srv.Config.Handler = hostCheck(srv.Listener.Addr(), []string{"proxy.example"}, newBrowser(root))
	defer srv.Close()
	client := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, host string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		require.NoError(t, err, path)
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	_, port, _ := splitHostPort(srv.Listener.Addr().String())
	for _, tc := range []struct {
		path, host string
		code       int
	}{
		{"/files/run/ok.txt", "", http.StatusOK},
		{"/files/inner/ok.txt", "", http.StatusOK},
		{"/files/run/ok.txt", "localhost:" + port, http.StatusOK},
		{"/files/run/ok.txt", "proxy.example", http.StatusOK},
		{"/files/escape/etc/passwd", "", http.StatusNotFound},
		{"/files/passwd", "", http.StatusNotFound},
		{"/files/../../../../etc/passwd", "", 0},
		{"/files/run/zero.jsonl", "", http.StatusNotFound}, // a link out of the root
		{"/files/fifo/result.json", "", http.StatusForbidden},
		{"/files/run/big.jsonl", "", http.StatusForbidden},
		{"/", "rebind.attacker.example:" + port, http.StatusMisdirectedRequest},
		{"/files/run/ok.txt", "127.0.0.1:1", http.StatusMisdirectedRequest},
		{"/", "", http.StatusOK}, // the FIFO named result.json does not hang the index
	} {
		code, body := get(tc.path, tc.host)
		if tc.code == 0 { // anything but the file
			assert.NotEqual(t, http.StatusOK, code, tc.path)
		} else {
			assert.Equal(t, tc.code, code, "%s (Host %q): %s", tc.path, tc.host, body)
		}
		assert.NotContains(t, body, "root:x:0", tc.path)
	}
}

func splitHostPort(a string) (string, string, error) {
	i := len(a) - 1
	for i >= 0 && a[i] != ':' {
		i--
	}
	return a[:i], a[i+1:], nil
}
