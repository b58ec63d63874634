#!/bin/sh
# show-devices [SECONDS]: the workload image's entrypoint. Prints what the DRA driver gave this
# container (the environment variables its CDI spec injected, and the device metadata files of
# KEP-5304 where the driver publishes them), then sleeps SECONDS (default: until stopped) and
# exits 0 on SIGTERM, so that a pod ends at once when it is deleted.
env | grep -E '^(claim|user|admin)_' | sort | sed 's/^/dra-env: /'
# One line per device of each metadata file: dra-device: POOL/DEVICE claim CLAIM, and the file.
find /var/run/kubernetes.io/dra-device-attributes -type f 2>/dev/null | sort | while read -r f; do
  m=$(tr -d '\n ' <"$f")
  claim=$(echo "$m" | sed -n 's/.*"metadata":{"name":"\([^"]*\)".*/\1/p')
  echo "$m" | grep -o '"pool":"[^"]*","name":"[^"]*"' |
    sed "s|\"pool\":\"\([^\"]*\)\",\"name\":\"\([^\"]*\)\"|dra-device: \1/\2 claim $claim|"
  echo "dra-metadata: $f $m"
done
echo "show-devices: done"
trap 'exit 0' TERM INT
sleep "${1:-2147483647}" &
wait $!
