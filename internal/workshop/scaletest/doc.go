// Package scaletest holds the acceptance tests of docs/scale.md, "Beyond
// one machine": real nats-server processes in a cluster, partitioned
// ingesters with their standbys sealing into one lake, SIGKILLs of
// ingesters and servers under load and in the middle of a seal, and the
// analyzers over the lake compared with one database of the same events.
// The package has no code of its own besides its tests.
package scaletest
