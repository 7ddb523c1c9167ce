package main

func init() { extraCommands = append(extraCommands, newNodeCmd, newClusterCmd) }
