package topo

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// State is what a running lab writes to its state directory, so that `exec`, `set` and
// `down` (other processes) can find it.
type State struct {
	Prefix   string            `json:"prefix"`
	Scenario string            `json:"scenario"`
	PID      int               `json:"pid"`
	Hosts    []HostState       `json:"hosts"`
	Links    map[string][2]int `json:"links"`
	// Routers are the router addresses of each link's ECMP members, a->b then b->a (links
	// without ECMP are left out): the hops traceroute shows.
	Routers map[string][2][]string `json:"routers,omitempty"`
	// Routers6 are the same routers' IPv6 addresses, for links that carry IPv6.
	Routers6 map[string][2][]string `json:"routers6,omitempty"`
	// RootSysctls holds the root namespace's values before the lab changed them.
	RootSysctls map[string]string `json:"root_sysctls"`
	// Management is the root namespace's address on the management bridge ("" without
	// one): hosts reach services in the root namespace (the Fathom server) there.
	Management string `json:"management,omitempty"`
}

// HostState is one host's namespace and address.
type HostState struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Address   string `json:"address"`
	// Address6 is the host's IPv6 address ("" when none of its links carries IPv6).
	Address6 string `json:"address6,omitempty"`
	// ManagementAddress is the host's address on the management bridge, if any.
	ManagementAddress string `json:"management_address,omitempty"`
}

// StateFile is the state's path in dir.
func StateFile(dir string) string { return filepath.Join(dir, "state.json") }

// ControlSocket is where a running lab takes `set` and `stats`.
func ControlSocket(dir string) string { return filepath.Join(dir, "control.sock") }

// Save writes the state atomically.
func (s *State) Save(dir string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := StateFile(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, StateFile(dir))
}

// LoadState reads a running lab's state.
func LoadState(dir string) (*State, error) {
	data, err := os.ReadFile(StateFile(dir))
	if err != nil {
		return nil, fmt.Errorf("no lab is up in %s: %w", dir, err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", StateFile(dir), err)
	}
	return &s, nil
}

// Host finds a host by name.
func (s *State) Host(name string) (HostState, error) {
	for _, h := range s.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return HostState{}, fmt.Errorf("the lab has no host %q", name)
}
