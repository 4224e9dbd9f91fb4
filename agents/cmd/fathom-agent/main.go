// Command fathom-agent measures network paths between Fathom agents: it enrols with the
// server, pulls its plan, runs the probes, spools the results and uploads them.
//
//	fathom-agent enroll --server URL --token T --name N --address A [--state-dir D] [--force]
//	fathom-agent run [--config FILE] [--config.check] [flags]
//	fathom-agent version
package main

import (
	"os"

	"github.com/fathom-net/fathom/agents/internal/cli"
)

var version = "dev"

func main() {
	os.Exit(cli.Main(os.Args[1:], version, os.Getenv, os.Stdout, os.Stderr))
}
