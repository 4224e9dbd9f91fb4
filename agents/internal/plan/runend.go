package plan

import (
	"context"
	"time"
)

type runEndKey struct{}

// WithRunEnd tells a run that fills its interval (a latency session) when the scheduler
// wants it over: earlier than a whole interval where a loaded window begins or ends.
func WithRunEnd(ctx context.Context, end time.Time) context.Context {
	return context.WithValue(ctx, runEndKey{}, end)
}

// RunEnd is the end WithRunEnd set, if any.
func RunEnd(ctx context.Context) (time.Time, bool) {
	end, ok := ctx.Value(runEndKey{}).(time.Time)
	return end, ok
}
