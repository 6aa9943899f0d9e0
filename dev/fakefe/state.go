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

package fakefe

import (
	"sort"
	"sync"
)

// State is what the FE stand-in (dev/cmd/fakefe) keeps in its meta
// directory so a restarted pod keeps its cluster: the nodes, the accounts
// with their passwords and roles, and the configuration items. Databases,
// grants and tables are not kept: a restarted stand-in has none until the
// agent declares them again.
type State struct {
	Frontends     []Frontend
	Backends      []Backend
	NextBackendID int64
	Users         map[string]UserState
	FEConfig      map[string]FEConfig
	BEConfig      map[int64]map[string]string
}

// UserState is one account of State.
type UserState struct {
	Password string `json:",omitempty"`
	// Hash is SHA1(SHA1(password)) for an account created with IDENTIFIED
	// BY PASSWORD.
	Hash         []byte   `json:",omitempty"`
	Roles        []string `json:",omitempty"`
	DefaultRoles []string `json:",omitempty"`
}

// State returns a copy of the server's persistent state.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{
		Frontends:     append([]Frontend(nil), s.frontends...),
		Backends:      append([]Backend(nil), s.backends...),
		NextBackendID: s.nextBackID,
		Users:         map[string]UserState{},
		FEConfig:      map[string]FEConfig{},
		BEConfig:      map[int64]map[string]string{},
	}
	for name, a := range s.users {
		st.Users[name] = UserState{Password: a.password, Hash: a.hash, Roles: setList(a.roles), DefaultRoles: setList(a.defaults)}
	}
	for k, v := range s.feConfig {
		st.FEConfig[k] = v
	}
	for id, cfg := range s.beConfig {
		c := map[string]string{}
		for k, v := range cfg {
			c[k] = v
		}
		st.BEConfig[id] = c
	}
	return st
}

// Restore replaces the server's persistent state with st.
func (s *Server) Restore(st State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frontends = append([]Frontend(nil), st.Frontends...)
	s.backends = append([]Backend(nil), st.Backends...)
	if st.NextBackendID > s.nextBackID {
		s.nextBackID = st.NextBackendID
	}
	if len(st.Users) > 0 {
		s.users = map[string]*account{}
		for name, u := range st.Users {
			a := newAccount(u.Password)
			a.hash = u.Hash
			for _, r := range u.Roles {
				a.roles[r] = true
			}
			for _, r := range u.DefaultRoles {
				a.defaults[r] = true
			}
			s.users[name] = a
		}
	}
	for k, v := range st.FEConfig {
		s.feConfig[k] = v
	}
	for id, cfg := range st.BEConfig {
		s.beConfig[id] = cfg
	}
}

func setList(m map[string]bool) []string {
	out := []string{}
	for k, ok := range m {
		if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Heartbeat is one round of the leader's heartbeats: every BE (at its
// heartbeat port) and every FE but self (at its edit log port) is alive if
// answers says it answered, dead otherwise. StarRocks' leader heartbeats
// every node in a daemon and a BE is alive while its heartbeat service
// answers (fe-core system/HeartbeatMgr; BE heartbeat_service_port); the
// stand-in asks only whether the port accepts a connection, and one missed
// round makes a node dead where StarRocks allows heartbeat_retry_times. The
// probes run outside the server's lock, in parallel.
func (s *Server) Heartbeat(self string, answers func(host string, port int) bool) {
	type node struct {
		host string
		port int
		fe   bool
	}
	var nodes []node
	s.mu.Lock()
	for _, f := range s.frontends {
		if f.Host != self {
			nodes = append(nodes, node{f.Host, f.EditLogPort, true})
		}
	}
	for _, b := range s.backends {
		nodes = append(nodes, node{b.Host, b.HeartbeatPort, false})
	}
	s.mu.Unlock()
	alive := make([]bool, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			alive[i] = answers(n.host, n.port)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range nodes {
		if n.fe {
			for j := range s.frontends {
				if s.frontends[j].Host == n.host && s.frontends[j].EditLogPort == n.port {
					s.frontends[j].Alive = alive[i]
					s.answered(&s.frontends[j].Version, alive[i])
				}
			}
			continue
		}
		for j := range s.backends {
			if s.backends[j].Host == n.host && s.backends[j].HeartbeatPort == n.port {
				s.backends[j].Alive = alive[i]
				s.answered(&s.backends[j].Version, alive[i])
			}
		}
	}
	for j := range s.frontends {
		if s.frontends[j].Host == self {
			s.answered(&s.frontends[j].Version, true)
		}
	}
}

// answered sets a node's version from its heartbeat answer; a node that
// did not answer keeps the version it last reported, as in StarRocks.
func (s *Server) answered(version *string, alive bool) {
	if alive && s.nodeVersion != "" {
		*version = s.nodeVersion
	}
}
