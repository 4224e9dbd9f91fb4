//go:build !linux

package hostclock

import "errors"

// Read is Linux's only: elsewhere the clock's state is unknown.
func Read() (State, error) {
	return Unknown, errors.New("the clock's synchronization is read from Linux's adjtimex only")
}
