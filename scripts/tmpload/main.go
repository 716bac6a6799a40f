package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func main() {
	addr := flag.String("addr", "", "")
	ak := flag.String("ak", "", "")
	sk := flag.String("sk", "", "")
	gets := flag.Int("gets", 4, "")
	puts := flag.Int("puts", 4, "")
	d := flag.Duration("for", 30*time.Second, "")
	flag.Parse()
	c, _ := minio.New(*addr, &minio.Options{Creds: credentials.NewStaticV4(*ak, *sk, "")})
	ctx := context.Background()
	c.MakeBucket(ctx, "load", minio.MakeBucketOptions{})
	data := make([]byte, 64<<20)
	rand.Read(data)
	for i := range 4 {
		if _, err := c.PutObject(ctx, "load", "read-"+strconv.Itoa(i), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			fmt.Println("seed put:", err)
		}
	}
	var ok, failed atomic.Int64
	var bytesDone atomic.Int64
	var firstErr atomic.Value
	cctx, cancel := context.WithTimeout(ctx, *d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for w := range *gets + *puts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; cctx.Err() == nil; i++ {
				var err error
				var n int64
				if w < *gets {
					var obj *minio.Object
					obj, err = c.GetObject(ctx, "load", "read-"+strconv.Itoa((w+i)%4), minio.GetObjectOptions{})
					if err == nil {
						n, err = io.Copy(io.Discard, obj)
						obj.Close()
					}
				} else {
					_, err = c.PutObject(ctx, "load", fmt.Sprintf("w-%d-%d", w, i%4), bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
					n = int64(len(data))
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					time.Sleep(100 * time.Millisecond)
					continue
				}
				ok.Add(1)
				bytesDone.Add(n)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("ok %d failed %d (%v) %.0f MiB/s\n", ok.Load(), failed.Load(), firstErr.Load(), float64(bytesDone.Load())/(1<<20)/time.Since(start).Seconds())
}
