//go:build fathomtestclock

package clock

import "testing"

func TestATestBuildHonoursTheTestRate(t *testing.T) {
	env := map[string]string{RateEnv: "60"}
	if c, err := FromEnv(func(name string) string { return env[name] }); err != nil || c.Rate() != 60 {
		t.Fatalf("clock %+v, %v; want rate 60", c, err)
	}
	env[RateEnv] = "0"
	if _, err := FromEnv(func(name string) string { return env[name] }); err == nil {
		t.Fatal("a rate of 0 was accepted")
	}
	delete(env, RateEnv)
	if c, err := FromEnv(func(name string) string { return env[name] }); err != nil || c != Real {
		t.Fatalf("unset: clock %+v, %v; want Real", c, err)
	}
}
