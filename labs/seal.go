package labs

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// A course key is 32 random bytes, written as 64 hex digits on one line.
// A teacher makes one with 'streamha lab teacher-key', seals the guides a
// teacher build prints with it ('lab guide N --teacher --seal KEY') and
// gives the key to the course's assistants only: a sealed guide can then
// lie where students can read it (a course repository), and the
// assistants open it with the ordinary binary ('lab open FILE --key KEY').
// The key is never in the binary: without it a sealed guide is noise.

// sealedHeader starts every sealed file.
const sealedHeader = "streamha sealed guide v1 (AES-256-GCM; open with: streamha lab open FILE --key KEYFILE)\n"

// NewCourseKey returns a new course key file's content.
func NewCourseKey() ([]byte, error) {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("course key: %w", err)
	}
	return []byte(hex.EncodeToString(k) + "\n"), nil
}

// ReadCourseKey reads a course key file. A key others can read is refused,
// as ssh refuses such a private key.
func ReadCourseKey(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --key: %w", ErrUsage, err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: --key %s: readable by others (mode %v): chmod 600 %s", ErrUsage, path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --key: %w", ErrUsage, err)
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) != 32 {
		return nil, fmt.Errorf("%w: --key %s: not a course key (64 hex digits, as 'streamha lab teacher-key' writes)", ErrUsage, path)
	}
	return k, nil
}

func courseAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("course key: %w", err)
	}
	return cipher.NewGCM(block)
}

// Seal encrypts a guide with a course key.
func Seal(key, plain []byte) ([]byte, error) {
	aead, err := courseAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	body := aead.Seal(nonce, nonce, plain, []byte(sealedHeader))
	var out bytes.Buffer
	out.WriteString(sealedHeader)
	enc := base64.StdEncoding.EncodeToString(body)
	for len(enc) > 76 {
		out.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	out.WriteString(enc + "\n")
	return out.Bytes(), nil
}

// ErrWrongKey is returned by Open for a file sealed with another key, or
// changed since.
var ErrWrongKey = errors.New("the file was sealed with another key, or changed since")

// Open decrypts a sealed guide.
func Open(key, sealed []byte) ([]byte, error) {
	body, ok := bytes.CutPrefix(sealed, []byte(sealedHeader))
	if !ok {
		return nil, fmt.Errorf("%w: not a sealed guide (it does not start with %q)", ErrUsage, strings.TrimSpace(sealedHeader))
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(body)), ""))
	if err != nil {
		return nil, fmt.Errorf("%w: a damaged sealed guide: %w", ErrUsage, err)
	}
	aead, err := courseAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(raw) < aead.NonceSize() {
		return nil, fmt.Errorf("%w: a damaged sealed guide: too short", ErrUsage)
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(sealedHeader))
	if err != nil {
		return nil, ErrWrongKey
	}
	return plain, nil
}
