// Command proxy is the TCP fault injector of e2e/chaos/chaos.sh: it forwards connections from
// -listen to -target (TLS passes through untouched; the API server's certificate names
// 127.0.0.1, whatever the port) and takes orders on an HTTP control address:
//
//	/latency?ms=N   delay every forwarded chunk by N ms, both ways (0 = none)
//	/reset          close every open connection with a TCP reset
//	/partition      a network partition: nothing reaches either side any more; bytes read from
//	                either side are dropped, and new connections are accepted and then starve
//	/heal           end the partition: the connections that lived through it are reset (their
//	                streams lost bytes, as a connection that timed out), new ones are forwarded
//	/stats          counters as JSON
//
// Nothing written during a partition ever reaches the target, so any write the API server
// commits from this client happened before /partition or after /heal.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

type pair struct {
	client, server net.Conn
	tainted        bool // saw the partition
}

type proxy struct {
	mu          sync.Mutex
	latency     time.Duration
	partitioned bool
	conns       map[*pair]bool
	accepted    int
	resets      int
	dropped     int64
}

func (p *proxy) closePair(c *pair) {
	for _, conn := range []net.Conn{c.client, c.server} {
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		if conn != nil {
			_ = conn.Close()
		}
	}
}

// pipe copies src to dst under the proxy's current faults until either side fails.
func (p *proxy) pipe(c *pair, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			part, lat := p.partitioned, p.latency
			if part {
				c.tainted = true
				p.dropped += int64(n)
			}
			p.mu.Unlock()
			if !part {
				if lat > 0 {
					time.Sleep(lat)
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
		}
		if err != nil {
			break
		}
	}
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.closePair(c)
}

// starve reads and drops what a client sends on a connection accepted during a partition, until
// /heal resets it.
func (p *proxy) starve(c *pair) {
	n, _ := io.Copy(io.Discard, c.client)
	p.mu.Lock()
	p.dropped += n
	delete(p.conns, c)
	p.mu.Unlock()
	p.closePair(c)
}

func (p *proxy) serve(ln net.Listener, target string) {
	for {
		cc, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			c := &pair{client: cc}
			p.mu.Lock()
			p.accepted++
			p.conns[c] = true
			part := p.partitioned
			if part {
				c.tainted = true
			}
			p.mu.Unlock()
			if part {
				p.starve(c)
				return
			}
			sc, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil {
				p.mu.Lock()
				delete(p.conns, c)
				p.mu.Unlock()
				p.closePair(c)
				return
			}
			p.mu.Lock()
			c.server = sc
			p.mu.Unlock()
			go p.pipe(c, cc, sc)
			p.pipe(c, sc, cc)
		}()
	}
}

func (p *proxy) control(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	var victims []*pair
	switch r.URL.Path {
	case "/latency":
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 {
			p.mu.Unlock()
			http.Error(w, "latency: want ?ms=N (N >= 0)", http.StatusBadRequest)
			return
		}
		p.latency = time.Duration(ms) * time.Millisecond
	case "/reset":
		for c := range p.conns {
			victims = append(victims, c)
		}
		p.resets += len(victims)
	case "/partition":
		p.partitioned = true
	case "/heal":
		p.partitioned = false
		for c := range p.conns {
			if c.tainted {
				victims = append(victims, c)
			}
		}
		p.resets += len(victims)
	case "/stats":
	default:
		p.mu.Unlock()
		http.Error(w, "unknown command "+r.URL.Path, http.StatusNotFound)
		return
	}
	stats := map[string]any{"open": len(p.conns), "accepted": p.accepted, "resets": p.resets,
		"dropped_bytes": p.dropped, "partitioned": p.partitioned, "latency_ms": p.latency.Milliseconds()}
	p.mu.Unlock()
	for _, c := range victims {
		p.closePair(c)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(stats)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept connections on")
	target := flag.String("target", "", "address to forward them to")
	ctl := flag.String("control", "", "HTTP control address")
	flag.Parse()
	if *target == "" || *ctl == "" {
		log.Fatal("proxy: -target and -control are required")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	p := &proxy{conns: map[*pair]bool{}}
	go p.serve(ln, *target)
	fmt.Printf("proxy %s -> %s, control %s\n", ln.Addr(), *target, *ctl)
	log.Fatal(http.ListenAndServe(*ctl, http.HandlerFunc(p.control)))
}
