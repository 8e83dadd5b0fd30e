/* placeholder replaced by the npy reader */
#include "npy.h"
