package tcpproxy_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/tcpproxy"
)

// echo serves one line back per connection until the test ends.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err == nil {
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through addr and reads it back.
func roundTrip(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}

// TestCutKeepsTheAddress: a cut line breaks open connections and turns new
// ones away, while the proxy keeps its port — no ":0" bind of anyone
// takes it meanwhile — and Restore forwards again on the same address.
func TestCutKeepsTheAddress(t *testing.T) {
	t.Parallel()
	p := tcpproxy.Start(t, echo(t))
	require.NoError(t, roundTrip(p.Addr()))

	open, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer open.Close()
	p.Cut()
	open.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = bufio.NewReader(open).ReadString('\n')
	assert.Error(t, err, "the open connection is broken")
	assert.Error(t, roundTrip(p.Addr()), "a new connection is turned away")

	_, err = net.Listen("tcp", p.Addr())
	assert.Error(t, err, "the proxy still holds its port")

	require.NoError(t, p.Restore())
	assert.NoError(t, roundTrip(p.Addr()))
}
