// Preloaded (`node --import`) into every child the bench starts: when the runner goes away, even
// by SIGKILL, the IPC channel closes and the child stops itself instead of lingering.
if (process.channel) {
  process.channel.unref();
  process.on('disconnect', () => {
    process.kill(process.pid, 'SIGTERM');
    setTimeout(() => process.exit(1), 5000).unref();
  });
}
