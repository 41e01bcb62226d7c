package cli

import (
	"runtime/debug"
	"strings"
)

// Version describes the build of command name from the binary's build
// information (runtime/debug.ReadBuildInfo): the module version, and the
// version control revision, its time and whether the tree was modified,
// where the build recorded them (go build in a checkout does; go install
// module@version records the version).
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " (no build information)"
	}
	return versionOf(name, bi)
}

func versionOf(name string, bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	parts := []string{name, v}
	if r := s["vcs.revision"]; r != "" {
		rev := "revision " + r
		if s["vcs.modified"] == "true" {
			rev += " (dirty)"
		}
		parts = append(parts, rev)
	}
	if t := s["vcs.time"]; t != "" {
		parts = append(parts, "committed "+t)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, " ")
}
