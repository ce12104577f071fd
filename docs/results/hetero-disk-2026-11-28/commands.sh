# Machine A (2 cores, 24 GiB, Debian 12), commit 2b4d8e2, build/directgnn (release).
bench/hetero/disk.sh 0.1 4 /tmp/hetdisk01   # -> mag-0.1/ (summary.txt is its output)
bench/hetero/disk.sh 1 4 /tmp/hetdisk       # stopped during the second run -> mag-1-partial/
