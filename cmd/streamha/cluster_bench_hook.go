package main

// The loopback cluster throughput row of streamha bench.
func init() { clusterBench = clusterThroughput }
