// Package tcpproxy is a TCP proxy for outage tests: it forwards a local
// address to a real server (PostgreSQL, Temporal, SMTP) and can cut the
// line — close every connection and turn new ones away — and restore it,
// without touching the server behind it.
//
// The proxy keeps its listener while the line is cut, turning each new
// connection away with a reset: were the port let go, anyone's ":0" bind
// (another test's embedded Temporal server picking its ports) could take
// it, and the proxy could not listen there again.
package tcpproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards connections on Addr to a target address.
type Proxy struct {
	target string
	ln     net.Listener
	done   sync.WaitGroup // the accept loop

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// Start listens on a free 127.0.0.1 port; the proxy is closed when the
// test ends.
func Start(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("tcpproxy: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.done.Add(1)
	go p.accept()
	tb.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port; it stays the same across Cut and Restore.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.done.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if p.isCut() {
			reset(c)
			continue
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			reset(c)
			continue
		}
		p.mu.Lock()
		if p.cut { // cut meanwhile
			p.mu.Unlock()
			reset(c)
			u.Close()
			continue
		}
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipe(c, u)
		go p.pipe(u, c)
	}
}

func (p *Proxy) isCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

// reset closes c with a TCP reset: its client sees the connection fail at
// once, as close to a refused one as a listener can give.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

func (p *Proxy) pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes every open connection and turns new ones away until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore forwards new connections again, on the same address. It never
// fails: the address was kept while the line was cut.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
	return nil
}

// close cuts the line for good and stops listening.
func (p *Proxy) close() {
	p.Cut()
	p.ln.Close()
	p.done.Wait()
}
