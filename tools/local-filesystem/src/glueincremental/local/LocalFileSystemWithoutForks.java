package glueincremental.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system ({@code file:}), checksums and all, that sets a file's permissions
 * in the JVM.
 *
 * <p>Without Hadoop's native library (PySpark ships none), {@code RawLocalFileSystem} runs the
 * {@code chmod} program for every file and directory it creates: a process forked per file,
 * about half the time of writing a small Parquet file on a local disk. A partitioned write of
 * 800 partitions forks 3,000 of them. This class sets the same permission bits through
 * {@code java.nio} instead. Local sessions only ({@code glue_incremental.spark}); S3 sets no
 * permissions.
 */
public class LocalFileSystemWithoutForks extends LocalFileSystem {
  public LocalFileSystemWithoutForks() {
    super(new Raw());
  }

  /** {@code RawLocalFileSystem} but for {@code setPermission}. */
  public static class Raw extends RawLocalFileSystem {
    // Bit i of FsPermission.toShort(), from the lowest: others x, w, r; group; owner.
    private static final PosixFilePermission[] BITS = {
      PosixFilePermission.OTHERS_EXECUTE,
      PosixFilePermission.OTHERS_WRITE,
      PosixFilePermission.OTHERS_READ,
      PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.GROUP_WRITE,
      PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE,
      PosixFilePermission.OWNER_WRITE,
      PosixFilePermission.OWNER_READ,
    };

    /** The nine permission bits, as {@code chmod} sets them; the sticky bit is not set. */
    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      short mode = permission.toShort();
      Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
      for (int i = 0; i < BITS.length; i++) {
        if ((mode & (1 << i)) != 0) {
          bits.add(BITS[i]);
        }
      }
      Files.setPosixFilePermissions(pathToFile(path).toPath(), bits);
    }
  }
}
