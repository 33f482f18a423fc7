// Package freeport picks loopback ports for servers that bind them later
// themselves — the embedded Temporal server's services, a child process a
// test starts — and keeps those ports from being picked again meanwhile.
//
// A port found by listening on ":0" and closing the listener is free for
// anyone's next ":0" at once: a second embedded Temporal server starting in
// another test, or another test's pick, may take it before its owner binds
// it, and one of the two fails with "address already in use". So each port
// picked here is left in TIME_WAIT (a connection to it that the server side
// closes first): for about a minute Linux hands it to no ":0" bind, while
// the explicit bind of its owner succeeds (SO_REUSEADDR, which Go sets on
// every listener).
package freeport

import (
	"fmt"
	"net"
	"strconv"
)

// Ports picks n distinct free ports on host and reserves each (Reserve).
func Ports(host string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick a free port on %s: %w", host, err)
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		err = hold(l)
		if err != nil {
			return nil, err
		}
	}
	return ports, nil
}

// Addrs picks n distinct free ports on 127.0.0.1 (Ports) as host:port.
func Addrs(n int) ([]string, error) {
	ports, err := Ports("127.0.0.1", n)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, n)
	for i, p := range ports {
		addrs[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	}
	return addrs, nil
}

// Reserve keeps addr, whose owner has let it go and will bind it again (a
// process killed and restarted on the same ports), from any ":0" bind for
// about a minute. It fails when addr cannot be bound: someone has it.
func Reserve(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("reserve %s: %w", addr, err)
	}
	return hold(l)
}

// hold leaves l's port in TIME_WAIT: a connection to l, closed by the
// server side first, then l closed.
func hold(l net.Listener) error {
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return fmt.Errorf("reserve %s: %w", l.Addr(), err)
	}
	defer c.Close()
	sc, err := l.Accept()
	if err != nil {
		return fmt.Errorf("reserve %s: %w", l.Addr(), err)
	}
	return sc.Close() // the server side closes first: its end waits in TIME_WAIT
}
