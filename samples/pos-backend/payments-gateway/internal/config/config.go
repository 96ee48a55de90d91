// Package config reads the gateway's settings from the environment.
package config

import (
	"os"
	"strconv"
	"time"

	"github.com/pkg/errors"
)

// Config is everything the gateway needs at start-up.
type Config struct {
	ListenAddr   string
	PSPBaseURL   string
	MerchantID   string
	PSPAPIKey    string
	PSPTimeout   time.Duration
	PSPCABundle  string
	MaxIdleConns int
}

// Load reads the environment. Required variables that are missing are an error:
// the gateway refuses to start rather than send unsigned requests to the processor.
func Load() (*Config, error) {
	cfg := &Config{
		ListenAddr:  getenv("LISTEN_ADDR", ":8080"),
		PSPBaseURL:  getenv("PSP_BASE_URL", "https://psp.cardproc.example"),
		PSPCABundle: getenv("PSP_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt"),
	}
	var err error
	if cfg.MerchantID, err = required("PSP_MERCHANT_ID"); err != nil {
		return nil, err
	}
	if cfg.PSPAPIKey, err = required("PSP_API_KEY"); err != nil {
		return nil, err
	}
	if cfg.PSPTimeout, err = time.ParseDuration(getenv("PSP_TIMEOUT", "8s")); err != nil {
		return nil, errors.Wrap(err, "config: PSP_TIMEOUT")
	}
	if cfg.MaxIdleConns, err = strconv.Atoi(getenv("PSP_MAX_IDLE_CONNS", "32")); err != nil {
		return nil, errors.Wrap(err, "config: PSP_MAX_IDLE_CONNS")
	}
	return cfg, nil
}

func required(key string) (string, error) {
	v, ok := os.LookupEnv(key)
	if !ok || v == "" {
		return "", errors.Errorf("config: required environment variable %s is not set", key)
	}
	return v, nil
}

func getenv(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}
