// The pod sandbox's process for the local real nodes (e2e/cluster/node-up.sh): holds the pod's
// namespaces, reaps orphans that end up as its children, and exits on SIGINT or SIGTERM. Built
// statically with Debian's gcc and libc, so the pause image needs nothing else.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void Stop(int sig) {
  (void)sig;
  _exit(0);
}

static void Reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char** argv) {
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'v') {
    puts("draco-pause 1");
    return 0;
  }
  struct sigaction stop = {.sa_handler = Stop};
  struct sigaction reap = {.sa_handler = Reap, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) != 0 || sigaction(SIGTERM, &stop, NULL) != 0 ||
      sigaction(SIGCHLD, &reap, NULL) != 0) {
    perror("sigaction");
    return 1;
  }
  for (;;) {
    pause();
  }
}
