package safefile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenRefusesWhatIsNotARegularFileWithoutBlocking checks the
// attacks on every reader of a user file: a FIFO without a writer, a
// device that never ends, a directory and links to them are refused at
// open (a FIFO must not block), a file above its bound is refused from its
// size, and a regular file within its bound is read whole.
func TestOpenRefusesWhatIsNotARegularFileWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "result.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	zero := filepath.Join(dir, "zero.jsonl")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	fifoLink := filepath.Join(dir, "fifo-link")
	require.NoError(t, os.Symlink(fifo, fifoLink))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, make([]byte, 4097), 0o644))
	ok := filepath.Join(dir, "ok")
	require.NoError(t, os.WriteFile(ok, []byte("hello\n"), 0o644))

	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, fifoLink, zero, "/dev/zero", dir} {
			_, err := ReadFile(p, 4096)
			assert.ErrorIs(t, err, ErrNotRegular, p)
		}
		_, err := ReadFile(big, 4096)
		assert.ErrorIs(t, err, ErrTooLarge)
		b, err := ReadFile(ok, 4096)
		assert.NoError(t, err)
		assert.Equal(t, "hello\n", string(b))
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a reader blocked on a FIFO")
	}
}

// TestReadStopsAtTheBoundWhenTheFileGrows checks that a file that grows
// past its bound after it was opened yields exactly the bound and then
// ErrTooLarge.
func TestReadStopsAtTheBoundWhenTheFileGrows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "grows")
	require.NoError(t, os.WriteFile(p, make([]byte, 100), 0o644))
	f, err := Open(p, 100)
	require.NoError(t, err)
	defer f.Close()
	w, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = w.Write(make([]byte, 1000))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	b, err := io.ReadAll(f)
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.Len(t, b, 100, "nothing past the bound is returned")
}
