// throw expressions (host code of the samples).
void check(int err, bool b) {
  if (err) throw std::runtime_error("failed");
  int v = b ? 1 : throw 2;
  try_again();
  throw;
}
