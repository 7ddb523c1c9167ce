package ha

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxNameLen bounds the length in bytes of the strings a message carries
// (host names, strategy message types).
const MaxNameLen = 1024

// DecodeName is decodeName for other wire formats of the project (the
// cluster handshake): a string of at most MaxNameLen bytes.
func DecodeName(d *msgpack.Decoder, what string) (string, error) { return decodeName(d, what) }

// decodeName reads a msgpack string (or nil) of at most MaxNameLen bytes.
// The decoder's own DecodeString allocates up to 1 MiB for whatever length
// a prefix announces before it finds the bytes missing, so a corrupt
// 30-byte frame used to cost megabytes (found by FuzzDecodeMessage, whose
// worker ran out of memory); here a long or lying prefix is an error.
func decodeName(d *msgpack.Decoder, what string) (string, error) {
	n, err := d.DecodeBytesLen()
	if err != nil {
		return "", err
	}
	if n <= 0 {
		return "", nil
	}
	if n > MaxNameLen {
		return "", fmt.Errorf("%w: %s of %d bytes (max %d)", ErrMalformed, what, n, MaxNameLen)
	}
	b := make([]byte, n)
	if err := d.ReadFull(b); err != nil {
		return "", err
	}
	return string(b), nil
}

// MaxBodyBytes bounds a message body (a checkpoint, a state transfer).
const MaxBodyBytes = 1 << 30

// bodyChunk is how much decodeBody allocates ahead of the bytes it has read.
const bodyChunk = 1 << 20

// decodeBody reads a msgpack bin (or nil) of at most MaxBodyBytes. The
// decoder's DecodeBytes allocates whatever length a prefix announces before
// reading a byte, so a corrupt 30-byte message announcing 3 GB allocated
// 3 GB (found by FuzzDecodeMessage, whose worker died of it); here memory
// grows only as the bytes actually arrive.
func decodeBody(d *msgpack.Decoder) ([]byte, error) {
	n, err := d.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	switch {
	case n == -1:
		return nil, nil
	case n < 0 || n > MaxBodyBytes:
		return nil, fmt.Errorf("%w: body of %d bytes (max %d)", ErrMalformed, n, MaxBodyBytes)
	}
	b := make([]byte, 0, min(n, bodyChunk))
	for len(b) < n {
		start := len(b)
		b = append(b, make([]byte, min(n-start, max(start, bodyChunk)))...)
		if err := d.ReadFull(b[start:]); err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
	}
	return b, nil
}
