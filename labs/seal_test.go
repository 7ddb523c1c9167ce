package labs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/streamha/streamha/labs"
)

func writeKey(t *testing.T, mode os.FileMode) (string, []byte) {
	t.Helper()
	k, err := labs.NewCourseKey()
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "course.key")
	require.NoError(t, os.WriteFile(p, k, mode))
	require.NoError(t, os.Chmod(p, mode))
	key, err := labs.ReadCourseKey(p)
	if mode&0o077 != 0 {
		require.ErrorIs(t, err, labs.ErrUsage)
		assert.Contains(t, err.Error(), "chmod 600")
		return p, nil
	}
	require.NoError(t, err)
	return p, key
}

func TestSealedGuideOpensOnlyWithItsKey(t *testing.T) {
	_, key := writeKey(t, 0o600)
	_, other := writeKey(t, 0o600)
	_, _ = writeKey(t, 0o644)
	guide := []byte("# Lab 7: teacher's guide\n- expected: 70 messages\n")
	sealed, err := labs.Seal(key, guide)
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "70 messages", "the sealed file does not hold the guide in clear")
	plain, err := labs.Open(key, sealed)
	require.NoError(t, err)
	assert.Equal(t, guide, plain)

	_, err = labs.Open(other, sealed)
	assert.ErrorIs(t, err, labs.ErrWrongKey)
	// One changed character anywhere in the body is detected.
	lines := strings.Split(string(sealed), "\n")
	b := []byte(lines[1])
	b[10] ^= 1
	lines[1] = string(b)
	_, err = labs.Open(key, []byte(strings.Join(lines, "\n")))
	assert.Error(t, err)
	_, err = labs.Open(key, guide)
	assert.ErrorIs(t, err, labs.ErrUsage, "a file that is no sealed guide is a usage error")
	again, err := labs.Seal(key, guide)
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "every seal draws its own nonce")
}

func TestReadCourseKeyRefusesWhatIsNoKey(t *testing.T) {
	p := filepath.Join(t.TempDir(), "k")
	require.NoError(t, os.WriteFile(p, []byte("not a key\n"), 0o600))
	_, err := labs.ReadCourseKey(p)
	require.ErrorIs(t, err, labs.ErrUsage)
	assert.Contains(t, err.Error(), "64 hex digits")
	_, err = labs.ReadCourseKey(filepath.Join(t.TempDir(), "nowhere"))
	assert.ErrorIs(t, err, labs.ErrUsage)
}
