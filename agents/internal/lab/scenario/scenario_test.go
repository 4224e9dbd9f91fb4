package scenario

import (
	"path/filepath"
	"strings"
	"testing"
)

const valid = `name: t
hosts:
  - name: a
    sysctls:
      net.ipv4.tcp_rmem: "4096 131072 6291456"
    congestion_control: cubic
  - name: b
links:
  - name: ab
    between: [a, b]
    both:
      delay_ms: 10
      jitter_ms: 0.1
    a_to_b:
      loss: 0.01
      rate_mbps: 100
      queue_bytes: 50000
    b_to_a:
      ecmp:
        - {delay_ms: 3.9, weight: 3}
        - {delay_ms: 8, weight: 1}
`

func TestParseValidScenarioAndMergeDirections(t *testing.T) {
	s, err := Parse("t.yaml", []byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	fwd, rev := s.Links[0].Forward(), s.Links[0].Reverse()
	if *fwd.DelayMs != 10 || *fwd.Loss != 0.01 || *fwd.JitterMs != 0.1 || *fwd.RateMbps != 100 {
		t.Fatalf("a_to_b must override both field by field: %+v", fwd)
	}
	if rev.DelayMs != nil || len(rev.ECMP) != 2 || *rev.JitterMs != 0.1 || rev.Loss != nil {
		t.Fatalf("b_to_a with ECMP drops the shared delay: %+v", rev)
	}
	if s.Links[0].LinkMTU() != 9000 || s.HostIndex("b") != 1 || s.HostIndex("z") != -1 {
		t.Fatal("defaults or host lookup wrong")
	}
}

func TestBadScenariosAreRefusedWithTheirLine(t *testing.T) {
	cases := map[string]struct{ edit, want string }{
		"unknown key": {
			strings.Replace(valid, "      delay_ms: 10", "      delay: 10", 1), "line 12: field delay not found"},
		"negative delay": {
			strings.Replace(valid, "delay_ms: 10", "delay_ms: -1", 1), "t.yaml:12: links[0].both.delay_ms: -1 out of range"},
		"loss above one": {
			strings.Replace(valid, "loss: 0.01", "loss: 1.5", 1), "t.yaml:15: links[0].a_to_b.loss: 1.5 is not a probability"},
		"missing host": {
			strings.Replace(valid, "between: [a, b]", "between: [a, c]", 1), `t.yaml:10: links[0].between[1]: no host named "c"`},
		"duplicate host": {
			strings.Replace(valid, "  - name: b\n", "  - name: a\n", 1), `hosts[1].name: host "a" is defined twice`},
		"global sysctl in a namespace": {
			strings.Replace(valid, "net.ipv4.tcp_rmem", "net.core.rmem_max", 1), "is global on Linux"},
		"queue without rate": {
			strings.Replace(valid, "      rate_mbps: 100\n", "", 1), "a queue needs rate_mbps"},
		"single ECMP member": {
			strings.Replace(valid, "        - {delay_ms: 8, weight: 1}\n", "", 1), "one member is not multipath"},
		"bad name": {
			strings.Replace(valid, "name: t", "name: T!", 1), `t.yaml:1: name: "T!" must be`},
		"long host name": {
			strings.Replace(valid, "  - name: b\n", "  - name: frankfurtmain\n", 1), "must be 1-10 lower-case"},
		"not yaml": {"hosts: [", "t.yaml: "},
		"self link": {
			strings.Replace(valid, "between: [a, b]", "between: [a, a]", 1), "a link joins two different hosts"},
		"bad mtu": {
			strings.Replace(valid, "    between: [a, b]\n", "    between: [a, b]\n    mtu: 100\n", 1), "links[0].mtu: 100 out of range"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestShippedScenariosAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../../../deploy/lab/scenarios/*.yaml")
	if len(files) == 0 {
		t.Fatal("no scenarios found in deploy/lab/scenarios")
	}
	for _, file := range files {
		s, err := Load(file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if s.Seed == "" || s.Scaling == "" || s.Description == "" {
			t.Errorf("%s must say its seed, its scaling and what it is", file)
		}
		if want := strings.TrimSuffix(filepath.Base(file), ".yaml"); s.Name != want {
			t.Errorf("%s is named %q", file, s.Name)
		}
	}
}
