// Command fathom-lab emulates long fat networks on one machine: network namespaces joined
// by user-space links with delay, loss, rate limits, policers and ECMP (docs/lab.md).
package main

import (
	"os"

	"github.com/fathom-net/fathom/agents/internal/lab/labcli"
)

func main() {
	os.Exit(labcli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
