// Package tcpproxy is a TCP proxy for outage tests: it forwards a local
// address to a real server (PostgreSQL, Temporal, SMTP) and can cut the
// line — close every connection and refuse new ones — and restore it,
// without touching the server behind it.
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
	addr   string

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Start listens on a free 127.0.0.1 port; the proxy is closed when the
// test ends.
func Start(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p := &Proxy{target: target, conns: map[net.Conn]struct{}{}}
	if err := p.listen("127.0.0.1:0"); err != nil {
		tb.Fatalf("tcpproxy: %v", err)
	}
	tb.Cleanup(p.Cut)
	return p
}

// Addr is the proxy's host:port; it stays the same across Cut and Restore.
func (p *Proxy) Addr() string { return p.addr }

func (p *Proxy) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // cut meanwhile
			p.mu.Unlock()
			c.Close()
			u.Close()
			return
		}
		p.conns[c], p.conns[u] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go p.pipe(c, u)
		go p.pipe(u, c)
	}
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

// Cut closes the listener and every open connection: clients see broken
// connections and refused new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	p.wg.Wait()
}

// Restore listens again on the same address.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	up := p.ln != nil
	p.mu.Unlock()
	if up {
		return nil
	}
	return p.listen(p.addr)
}
