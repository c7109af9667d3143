// try / catch (host code of the samples).
void run(Pools &pools) {
  try {
    initalizeData(graph, pools);
  } catch (thrust::system_error &e) {
    cout << "failed" << e.what();
  } catch (const std::exception &) {
    throw;
  } catch (...) {
    return;
  }
  try { a(); }
}
