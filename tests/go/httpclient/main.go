// Command httpclient is the Go client of
// tests/cross_language/http/one_upstream.py: http.Client with
// lazybreaker.Transport over the registry file.
//
//	httpclient REGISTRY_FILE URL
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	lazybreaker "github.com/lazybreaker/lazybreaker/bindings/go"
)

func main() {
	if len(os.Args) < 3 {
		log.Fatal("usage: httpclient REGISTRY_FILE URL")
	}
	file, url := os.Args[len(os.Args)-2], os.Args[len(os.Args)-1]
	reg, err := lazybreaker.OpenRegistry(lazybreaker.RegistryOptions{Path: file, Create: true})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	client := &http.Client{Transport: &lazybreaker.Transport{Registry: reg,
		Settings: lazybreaker.Settings{FailureThreshold: 1, Timeout: 2 * time.Second}}}
	fmt.Println("ready")
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		resp, err := client.Get(url)
		var rejected *lazybreaker.RejectedError
		switch {
		case errors.As(err, &rejected):
			fmt.Println("rejected")
		case err != nil:
			log.Fatal(err)
		default:
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			fmt.Println("sent", resp.StatusCode)
		}
	}
}
