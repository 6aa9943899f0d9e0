// Command idle is the RSS floor for the agent's memory benchmark: a Go
// program that serves HTTP and does nothing else.
package main

import (
	"net"
	"net/http"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	_ = http.Serve(l, http.NotFoundHandler())
}
