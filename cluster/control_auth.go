package cluster

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Control requests are authenticated one by one: the header
//
//	Authorization: StreamHA-HMAC ts=<unix ns> nonce=<32 hex digits> body=<64 hex digits> mac=<64 hex digits>
//
// carries an HMAC-SHA256, keyed with Keys.Control, over the method, the
// path, the timestamp, the nonce and the SHA-256 of the body (the body=
// field). The tag covers the header only, so it is checked before a byte
// of the body is read: a stranger's request is refused after its header
// (at most maxControlHeader bytes), whatever it declares or sends after.
// Only then is the body read, up to maxControlBody, and its SHA-256
// compared with the signed one. A request is accepted once: its
// timestamp must lie within ControlWindow of the node's clock and its
// nonce must not have been seen in that window, so a token read off the
// wire is worth nothing for another request, body or moment, and nothing
// for the same request again.
const (
	// ControlWindow is how far a control request's timestamp may be from
	// the node's clock.
	ControlWindow = 30 * time.Second
	// controlScheme names the Authorization scheme.
	controlScheme = "StreamHA-HMAC"
	// maxControlBody bounds an authenticated control request's body.
	maxControlBody = 64 << 10
	// maxControlHeader bounds a control request's header block (Go's
	// http.Server reads this much at most before a handler runs).
	maxControlHeader = 8 << 10
	// maxNonces bounds the replay cache: at most this many authenticated
	// requests per ControlWindow (only holders of the secret can add one).
	maxNonces = 1 << 16
)

// ErrControlAuth is returned (wrapped) for a control request whose token
// is missing, malformed, stale, replayed or wrong.
var ErrControlAuth = errors.New("control request not authenticated")

// controlMAC is the tag of one control request whose body has SHA-256 sum.
func controlMAC(key []byte, method, path string, ts int64, nonce string, sum []byte) []byte {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s\n%s\n%d\n%s\n%x", method, path, ts, nonce, sum)
	return m.Sum(nil)
}

// signRequest sets req's Authorization header for body at now; without a
// key it does nothing.
func signRequest(req *http.Request, k Keys, body []byte, now time.Time) {
	if !k.Enabled() {
		return
	}
	var n [16]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	ts := now.UnixNano()
	sum := sha256.Sum256(body)
	mac := controlMAC(k.Control, req.Method, req.URL.Path, ts, nonce, sum[:])
	req.Header.Set("Authorization", fmt.Sprintf("%s ts=%d nonce=%s body=%x mac=%x", controlScheme, ts, nonce, sum, mac))
}

// controlAuth checks control requests against one key and remembers the
// nonces it accepted within the window.
type controlAuth struct {
	key []byte
	now func() time.Time

	mu     sync.Mutex
	nonces map[string]int64 // nonce → timestamp of its request
}

func newControlAuth(k Keys, now func() time.Time) *controlAuth {
	return &controlAuth{key: k.Control, now: now, nonces: map[string]int64{}}
}

// check verifies req's tag before reading its body, then reads the body
// (up to maxControlBody, replacing it with a copy), checks it against the
// signed digest and records the nonce.
func (a *controlAuth) check(req *http.Request) error {
	ts, nonce, sum, mac, err := parseControlAuth(req.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	now := a.now().UnixNano()
	if d := now - ts; d > int64(ControlWindow) || d < -int64(ControlWindow) {
		return fmt.Errorf("%w: timestamp %s away from this node's clock (window %s)", ErrControlAuth, time.Duration(d), ControlWindow)
	}
	if !hmac.Equal(mac, controlMAC(a.key, req.Method, req.URL.Path, ts, nonce, sum)) {
		return fmt.Errorf("%w: wrong tag", ErrControlAuth)
	}
	if req.ContentLength > maxControlBody {
		return fmt.Errorf("%w: body of %d bytes above %d", ErrControlAuth, req.ContentLength, maxControlBody)
	}
	if err := a.remember(nonce, ts, now); err != nil {
		return err
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, maxControlBody+1))
		if err != nil {
			return fmt.Errorf("%w: read body: %w", ErrControlAuth, err)
		}
		if len(b) > maxControlBody {
			return fmt.Errorf("%w: body above %d bytes", ErrControlAuth, maxControlBody)
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	if got := sha256.Sum256(body); !hmac.Equal(got[:], sum) {
		return fmt.Errorf("%w: body does not match its signed digest", ErrControlAuth)
	}
	return nil
}

// remember records an authenticated nonce; a nonce seen within the window
// is a replay.
func (a *controlAuth) remember(nonce string, ts, now int64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, seen := a.nonces[nonce]; seen {
		return fmt.Errorf("%w: nonce already used (a replayed request)", ErrControlAuth)
	}
	if len(a.nonces) >= maxNonces {
		for n, t := range a.nonces {
			if now-t > int64(ControlWindow) || t-now > int64(ControlWindow) {
				delete(a.nonces, n)
			}
		}
		if len(a.nonces) >= maxNonces {
			return fmt.Errorf("%w: more than %d control requests within %s", ErrControlAuth, maxNonces, ControlWindow)
		}
	}
	a.nonces[nonce] = ts
	return nil
}

// parseControlAuth splits an Authorization header of the StreamHA-HMAC scheme.
func parseControlAuth(h string) (ts int64, nonce string, sum, mac []byte, err error) {
	scheme, rest, ok := strings.Cut(h, " ")
	if !ok || scheme != controlScheme {
		return 0, "", nil, nil, fmt.Errorf("%w: want Authorization: %s ts=… nonce=… body=… mac=…", ErrControlAuth, controlScheme)
	}
	var haveTS bool
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "ts":
			ts, err = strconv.ParseInt(v, 10, 64)
			haveTS = err == nil
		case "nonce":
			if _, e := hex.DecodeString(v); e == nil && len(v) == 32 {
				nonce = v
			}
		case "body":
			if b, e := hex.DecodeString(v); e == nil && len(b) == sha256.Size {
				sum = b
			}
		case "mac":
			if b, e := hex.DecodeString(v); e == nil && len(b) == sha256.Size {
				mac = b
			}
		}
	}
	if !haveTS || nonce == "" || sum == nil || mac == nil {
		return 0, "", nil, nil, fmt.Errorf("%w: malformed %s header (want ts=<unix ns> nonce=<32 hex> body=<64 hex> mac=<64 hex>)", ErrControlAuth, controlScheme)
	}
	return ts, nonce, sum, mac, nil
}
