package main

import (
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/streamha/streamha/internal/netlimit"
	"github.com/streamha/streamha/internal/safefile"
)

// Bounds of 'streamha serve': what one request can make it read, hold or
// wait for.
const (
	// maxServedFile bounds a file served under /files/ (reports, traces,
	// result.json of a run are far smaller).
	maxServedFile = 1 << 30
	// serveMaxConns and serveMaxConnsPerAddr cap open connections.
	serveMaxConns        = 128
	serveMaxConnsPerAddr = 32
)

// newServeServer is the HTTP server of 'streamha serve' with a timeout on
// every read and write: a client that stalls a request, or stops reading
// a response, is dropped.
func newServeServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}

// limitServe caps the connections of ln (netlimit.Limit).
func limitServe(ln net.Listener) net.Listener {
	return netlimit.Limit(ln, serveMaxConns, serveMaxConnsPerAddr)
}

// hostCheck refuses (421) a request whose Host header names neither the
// address serve listens on nor, on a loopback or unspecified address,
// localhost or the machine's addresses: a web page elsewhere cannot reach
// the server through a DNS name it points at 127.0.0.1 (DNS rebinding).
// allowed adds names (a reverse proxy's), matched without the port.
func hostCheck(bound net.Addr, allowed []string, next http.Handler) http.Handler {
	bh, port, _ := net.SplitHostPort(bound.String())
	bip := net.ParseIP(bh)
	ok := func(host string) bool {
		h, p, err := net.SplitHostPort(host)
		if err != nil {
			h, p = host, "80"
		}
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if slices.Contains(allowed, h) {
			return true
		}
		if p != port {
			return false
		}
		ip := net.ParseIP(h)
		switch {
		case bip == nil:
			return false
		case bip.IsUnspecified():
			// Bound to every interface: IP literals and the machine's names.
			hn, _ := os.Hostname()
			return ip != nil || h == "localhost" || h == strings.ToLower(hn)
		case bip.IsLoopback():
			return h == "localhost" || (ip != nil && ip.IsLoopback())
		}
		return ip != nil && ip.Equal(bip)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ok(r.Host) {
			http.Error(w, fmt.Sprintf("serve: Host %q is not this server's address (give --allow-host to serve under another name)", r.Host), http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// confinedFiles serves the files under root at /files/: only regular
// files of at most maxServedFile bytes and directory listings, resolved
// inside root (os.Root: no "..", no symbolic link leading out of it).
type confinedFiles struct {
	root *os.Root
}

func (c confinedFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(r.URL.Path, "/files/")), "/")
	if name == "" {
		name = "."
	}
	if !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	st, err := c.root.Stat(name)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if st.IsDir() {
		if !strings.HasSuffix(r.URL.Path, "/") {
			http.Redirect(w, r, path.Base(r.URL.Path)+"/", http.StatusMovedPermanently)
			return
		}
		c.list(w, name)
		return
	}
	f, err := safefile.OpenIn(c.root, name, maxServedFile)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, path.Base(name), st.ModTime(), f)
}

// fail answers an error without saying more than that the path is not served.
func (c confinedFiles) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, safefile.ErrNotRegular), errors.Is(err, safefile.ErrTooLarge):
		http.Error(w, "serve: only regular files of at most 1 GiB are served: "+err.Error(), http.StatusForbidden)
	default:
		http.NotFound(w, r)
	}
}

// list writes a directory's entries as links.
func (c confinedFiles) list(w http.ResponseWriter, name string) {
	d, err := c.root.Open(name)
	if err != nil {
		http.Error(w, "serve: cannot list this directory", http.StatusForbidden)
		return
	}
	defer d.Close()
	ents, err := d.ReadDir(10000)
	if err != nil && len(ents) == 0 {
		http.Error(w, "serve: cannot list this directory", http.StatusForbidden)
		return
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	render(w, dirPage, map[string]any{"Dir": name, "Names": names})
}

var dirPage = template.Must(template.New("dir").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Dir}}</title></head><body>
<pre>{{range .Names}}<a href="{{.}}">{{.}}</a>
{{end}}</pre></body></html>`))
