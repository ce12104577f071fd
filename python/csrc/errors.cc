#include "errors.h"

#include <c10/util/Exception.h>

#include <string>

namespace directgnn::ops {

void rethrow_for_python() {
  try {
    throw;
  } catch (const InvalidArgument& e) {
    throw c10::ValueError(e.what());
  } catch (const WrongType& e) {
    throw c10::TypeError(e.what());
  } catch (const OutOfRange& e) {
    throw c10::IndexError(e.what());
  } catch (const IoError& e) {
    throw c10::Error(std::string(kOsErrorMark) + e.what());
  }
}

}  // namespace directgnn::ops
