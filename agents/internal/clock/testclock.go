//go:build fathomtestclock

package clock

// FromEnv is the running agent's clock. This is a test build: RateEnv makes its waits pass
// faster than real time.
func FromEnv(getenv func(string) string) (Clock, error) { return fromRate(getenv(RateEnv)) }
