/*
Copyright 2026 Flant JSC

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package conn is the agent's only way to talk to StarRocks: MySQL protocol
// over verified TLS, to a DNS name (never a loopback address, which the FE
// exempts from ssl_force_secure_transport), with a connection pool that is
// recycled when the trusted CA or the credentials change.
package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Target is everything a connection depends on. A change of any field starts
// a new pool generation.
type Target struct {
	// Addr is host:port to dial.
	Addr string
	// ServerName is verified against the server certificate.
	ServerName string
	// Roots are the trusted CAs.
	Roots *x509.CertPool
	// RootsID identifies the CA content (e.g. a hash), so that a reload of
	// the same files does not recycle the pool.
	RootsID  string
	User     string
	Password string
}

// Options tune a Client.
type Options struct {
	// DialFunc replaces the TCP dialer; tests use it to resolve the
	// instance's DNS names to local servers.
	DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)
	// Timeout bounds dialling plus the handshake; ReadWriteTimeout bounds a
	// single packet exchange.
	Timeout          time.Duration
	ReadWriteTimeout time.Duration
	// OnHandshake is called after every verified TLS handshake with the
	// server's leaf certificate.
	OnHandshake func(peer *x509.Certificate)
}

// Client is a recyclable pool. Safe for concurrent use.
type Client struct {
	opts Options

	mu  sync.RWMutex
	cur *generation
}

type generation struct {
	target Target
	db     *sql.DB
	users  sync.WaitGroup
}

// New returns a Client without a target; Do fails until SetTarget.
func New(opts Options) *Client {
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.ReadWriteTimeout == 0 {
		opts.ReadWriteTimeout = 30 * time.Second
	}
	return &Client{opts: opts}
}

// ValidateHost refuses loopback targets: the StarRocks FE does not enforce
// TLS for them, so a broken TLS setup would stay hidden.
func ValidateHost(host string) error {
	if host == "localhost" {
		return fmt.Errorf("host %q is loopback: the agent must dial a DNS name so TLS enforcement applies", host)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return fmt.Errorf("host %q is loopback: the agent must dial a DNS name so TLS enforcement applies", host)
	}
	return nil
}

// SetTarget switches to t. If anything changed, new connections use the new
// settings at once and the old pool is closed when its in-flight queries end,
// so rotation never fails a running query.
func (c *Client) SetTarget(t Target) error {
	host, port, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return fmt.Errorf("target address %q: %w", t.Addr, err)
	}
	if _, err := strconv.Atoi(port); err != nil {
		return fmt.Errorf("target address %q: port: %w", t.Addr, err)
	}
	if err := ValidateHost(host); err != nil {
		return err
	}
	if t.Roots == nil {
		return errors.New("no trusted CA: refusing to connect without TLS verification")
	}
	c.mu.Lock()
	if c.cur != nil && c.cur.target.same(t) {
		c.mu.Unlock()
		return nil
	}
	g := &generation{target: t, db: c.open(t)}
	old := c.cur
	c.cur = g
	c.mu.Unlock()
	if old != nil {
		go func() {
			old.users.Wait()
			_ = old.db.Close()
		}()
	}
	return nil
}

// Recycle starts a new pool generation with the same target, e.g. after the
// account was recreated and old sessions may be dead.
func (c *Client) Recycle() {
	c.mu.Lock()
	old := c.cur
	if old == nil {
		c.mu.Unlock()
		return
	}
	c.cur = &generation{target: old.target, db: c.open(old.target)}
	c.mu.Unlock()
	go func() {
		old.users.Wait()
		_ = old.db.Close()
	}()
}

func (a Target) same(b Target) bool {
	return a.Addr == b.Addr && a.ServerName == b.ServerName && a.RootsID == b.RootsID &&
		a.User == b.User && a.Password == b.Password
}

func (c *Client) open(t Target) *sql.DB {
	tlsCfg := &tls.Config{
		RootCAs:    t.Roots,
		ServerName: t.ServerName,
		// The FE reads a PKCS12/JKS keystore with TLS 1.2.
		MinVersion: tls.VersionTLS12,
	}
	if cb := c.opts.OnHandshake; cb != nil {
		tlsCfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) > 0 {
				cb(cs.PeerCertificates[0])
			}
			return nil
		}
	}
	cfg := mysql.NewConfig()
	cfg.User = t.User
	cfg.Passwd = t.Password
	cfg.Net = "tcp"
	cfg.Addr = t.Addr
	cfg.TLS = tlsCfg
	cfg.Timeout = c.opts.Timeout
	cfg.ReadTimeout = c.opts.ReadWriteTimeout
	cfg.WriteTimeout = c.opts.ReadWriteTimeout
	// Statements are interpolated client-side: the FE has limited support
	// for server-side prepared statements, and one round trip is enough.
	cfg.InterpolateParams = true
	cfg.DialFunc = c.opts.DialFunc
	// NewConnector only fails on an invalid config, which Target cannot build.
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		panic(fmt.Sprintf("mysql connector: %v", err))
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	return db
}

// Do runs fn with the current pool. Errors are classified: the returned error
// is an *Error whose Op is op.
func (c *Client) Do(ctx context.Context, op string, fn func(ctx context.Context, db *sql.DB) error) error {
	c.mu.RLock()
	g := c.cur
	if g != nil {
		g.users.Add(1)
	}
	c.mu.RUnlock()
	if g == nil {
		return &Error{Kind: KindConnection, Op: op, Err: errors.New("no target configured")}
	}
	defer g.users.Done()
	if err := fn(ctx, g.db); err != nil {
		return &Error{Kind: Classify(err, true, KindQuery), Op: op, Err: err}
	}
	return nil
}

// Ping checks that a verified TLS session can be established and used.
func (c *Client) Ping(ctx context.Context) error {
	addr := c.Addr()
	return c.Do(ctx, "connect to "+addr, func(ctx context.Context, db *sql.DB) error {
		// Right after SetTarget the generation's pool is empty, so this
		// is a new handshake with the current certificates.
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return conn.PingContext(ctx)
	})
}

// Addr is the current target address.
func (c *Client) Addr() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.cur == nil {
		return ""
	}
	return c.cur.target.Addr
}

// Close closes the pool after in-flight queries end.
func (c *Client) Close() error {
	c.mu.Lock()
	g := c.cur
	c.cur = nil
	c.mu.Unlock()
	if g == nil {
		return nil
	}
	g.users.Wait()
	return g.db.Close()
}

// Retry calls fn until it succeeds, the error is not retryable (TLS, auth,
// query errors are reported at once instead of hidden behind retries), the
// attempts are used up or ctx ends. Backoff doubles from base with full
// jitter so that several agents do not retry in lockstep.
func Retry(ctx context.Context, attempts int, base time.Duration, fn func(ctx context.Context) error) error {
	var err error
	delay := base
	for i := 0; i < attempts; i++ {
		if err = fn(ctx); err == nil {
			return nil
		}
		var e *Error
		if errors.As(err, &e) && !e.Retryable() {
			return err
		}
		if i == attempts-1 {
			break
		}
		sleep := delay/2 + rand.N(delay/2+1)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (gave up: %v)", err, ctx.Err())
		case <-time.After(sleep):
		}
		delay *= 2
	}
	return err
}
