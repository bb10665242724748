#include "store/background_writeback.hpp"

#include <fcntl.h>

namespace attnscan {

BackgroundWriteback::BackgroundWriteback(int fd, std::chrono::milliseconds period)
    : thread_(period, [fd] { ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE); }) {}  // the whole file; errors reach the fdatasync

}  // namespace attnscan
