package freeport_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/freeport"
)

// timeWait reports whether /proc/net/tcp holds a socket on local port
// port in TIME_WAIT (state 06).
func timeWait(t *testing.T, port int) bool {
	t.Helper()
	raw, err := os.ReadFile("/proc/net/tcp")
	if os.IsNotExist(err) {
		t.Skip("no /proc/net/tcp: not Linux")
	}
	require.NoError(t, err)
	local := fmt.Sprintf(":%04X ", port)
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1]+" ", local) && f[3] == "06" {
			return true
		}
	}
	return false
}

// TestPickedPortsAreKeptFromOtherPicks: a picked port waits in TIME_WAIT,
// so the ":0" binds of others — a thousand listeners at once here — never
// get it, while its owner's explicit bind does.
func TestPickedPortsAreKeptFromOtherPicks(t *testing.T) {
	addrs, err := freeport.Addrs(20)
	require.NoError(t, err)
	reserved := map[string]bool{}
	for _, a := range addrs {
		require.False(t, reserved[a], "distinct ports")
		reserved[a] = true
		_, p, err := net.SplitHostPort(a)
		require.NoError(t, err)
		var port int
		fmt.Sscan(p, &port)
		assert.True(t, timeWait(t, port), "%s waits in TIME_WAIT", a)
	}

	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range 1000 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns = append(lns, l)
		assert.False(t, reserved[l.Addr().String()], "a \":0\" bind got the reserved %s", l.Addr())
	}

	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		require.NoError(t, err, "the owner binds %s", a)
		l.Close()
	}
}

// TestReserveAnAddressGivenUp: an address let go is reserved again for its
// owner's restart; one that someone holds cannot be.
func TestReserveAnAddressGivenUp(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	assert.Error(t, freeport.Reserve(addr), "held by a listener")
	l.Close()
	require.NoError(t, freeport.Reserve(addr))
	port := l.Addr().(*net.TCPAddr).Port
	assert.True(t, timeWait(t, port))
	l, err = net.Listen("tcp", addr)
	require.NoError(t, err, "its owner binds it again")
	l.Close()
}
