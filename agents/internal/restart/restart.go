// Package restart keeps the agent's listeners up (the iperf3 server, the echo responder, the
// TWAMP-light reflector and its control server): one that fails is started again after a
// pause that doubles while it keeps failing, so a port another process holds is retried
// without spinning, and a listener that ran a while before failing is restarted promptly.
package restart

import (
	"context"
	"time"
)

// Healthy is how long a run must last for the next failure to count as a first one again.
const Healthy = time.Minute

// Loop calls serve until ctx ends. After each return it calls failed with serve's error and
// the pause before the next call: minBackoff at first and after a healthy run, doubling up to
// maxBackoff while runs keep failing.
func Loop(ctx context.Context, minBackoff, maxBackoff time.Duration, serve func(context.Context) error,
	failed func(err error, retryIn time.Duration)) {
	backoff := minBackoff
	for ctx.Err() == nil {
		began := time.Now()
		err := serve(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > Healthy {
			backoff = minBackoff
		}
		failed(err, backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}
