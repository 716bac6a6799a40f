#!/usr/bin/env bash
# Installs the real S3 clients the blob tier's acceptance tests drive, from
# Debian's apt when missing: awscli and boto3 (unless the machine's pyenv
# already has them), s3cmd, rclone, and curl (SigV4: the testbed's tasks).
# Needs root or passwordless sudo.
set -euo pipefail
pkgs=()
command -v aws >/dev/null || pkgs+=(awscli)
python3 -c 'import boto3' 2>/dev/null || pkgs+=(python3-boto3)
command -v s3cmd >/dev/null || pkgs+=(s3cmd)
command -v rclone >/dev/null || pkgs+=(rclone)
command -v curl >/dev/null || pkgs+=(curl)
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "clients: aws, boto3, s3cmd, rclone and curl present"
	exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if sudo -n true 2>/dev/null; then sudo="sudo -n"; else
		echo "clients: missing ${pkgs[*]}; install them with apt as root (the S3 client tests need them)" >&2
		exit 1
	fi
fi
echo "clients: installing ${pkgs[*]} from apt"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 ||
	{ $sudo apt-get update -qq && $sudo apt-get install -y --no-install-recommends "${pkgs[@]}" >/dev/null; }
echo "clients: installed ${pkgs[*]}"
