//go:build !fathomtestclock

package clock

import "testing"

// The production binary is this build: the variable a test build reads changes nothing, and
// a malformed value is no error either (nothing reads it).
func TestAProductionBuildIgnoresTheTestRate(t *testing.T) {
	for _, value := range []string{"60", "3600", "fast"} {
		getenv := func(name string) string {
			if name == RateEnv {
				return value
			}
			return ""
		}
		if c, err := FromEnv(getenv); err != nil || c != Real {
			t.Errorf("%s=%s: clock %+v, %v; a production build must wait in real time", RateEnv, value, c, err)
		}
	}
}
